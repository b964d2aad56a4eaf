import { limits } from "../config/limits.ts";

/**
 * Delay before the next attempt after `attempts` failed ones: base * 2^(attempts-1), capped,
 * with "equal jitter" (half fixed, half random) so relays that failed together do not retry in
 * lockstep, yet no retry comes sooner than half its step. `random` is in [0, 1).
 */
export function backoffMs(attempts: number, random: number = Math.random(), base = limits.outbox.backoffBaseMs, cap = limits.outbox.backoffCapMs): number {
  const step = Math.min(cap, base * 2 ** Math.min(Math.max(attempts - 1, 0), 40));
  return Math.round(step / 2 + random * (step / 2));
}
