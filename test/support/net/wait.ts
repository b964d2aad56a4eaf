import { setTimeout as sleep } from "node:timers/promises";
import { netBounds } from "./bounds.ts";

/**
 * Re-reads kernel state (a counter, a link) until `check` holds: the kernel sends no event for
 * these, so this is the event. Gives up loudly after `giveUpMs`, a guard against a hang, never a
 * deadline a test relies on.
 */
export async function pollUntil(check: () => Promise<boolean>, what: string,
  giveUpMs: number = netBounds.commandTimeoutMs): Promise<void> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > giveUpMs) {
      throw new Error(`gave up waiting for ${what} after ${giveUpMs} ms`);
    }
    await sleep(netBounds.rulesetPollIntervalMs);
  }
}
