import { limits } from "../config/limits.ts";
import type { Logger } from "./logger.ts";

/**
 * A failure that a loop repeats (a probe, an outbox pass, a lease renewal, a rescan), logged
 * once per interval with a count, never once per attempt (docs/decisions/0082):
 *
 * - the first failure after a success (or after a quiet interval) is logged at once;
 * - the ones after it are counted, and at the end of each interval in which any happened one
 *   line says how many: "database unreachable, 37 attempts in the last 10 s: ECONNREFUSED";
 * - a success after failures logs one line with the total and how long it lasted;
 * - an interval without a failure and without a success (a caller that never reports success)
 *   ends the episode silently, so the next failure is logged at once again.
 *
 * An outage of T ms thus costs at most 2 + T / intervalMs lines per loop, whatever the rate of
 * attempts.
 */
export interface RepeatedFailureLog {
  /** One failed attempt; `fields` (no card data) go on the line that reports it, if any. */
  failed(error: unknown, fields?: Record<string, unknown>): void;
  /** One attempt that worked: after failures, the line that says they are over. */
  succeeded(): void;
  /** Failing now: since when (epoch ms), how many attempts, and the last reason. */
  failing(): { sinceMs: number; attempts: number; reason: string } | undefined;
  /** Logs what is counted and not yet logged, and stops the interval timer. */
  close(): void;
}

export interface RepeatedFailureLogOptions {
  intervalMs?: number;
  level?: "warn" | "error";
  /** The line when failures end (before " after N failed attempts in S s"); "<what>: over" */
  recovered?: string;
}

/** The short reason of a failure: a system or SQLSTATE code when there is one, else the message. */
export function failureReason(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && code !== "") return code;
    // An AggregateError of a connect tried on several addresses: its first one.
    const nested = (error as { errors?: unknown }).errors;
    if (Array.isArray(nested) && nested.length > 0) return failureReason(nested[0]);
  }
  if (error instanceof Error && error.message !== "") return error.message;
  return String(error);
}

function seconds(ms: number): string {
  return ms < 10_000 ? (ms / 1_000).toFixed(1) : String(Math.round(ms / 1_000));
}

export function repeatedFailureLog(
  logger: Logger, what: string, options: RepeatedFailureLogOptions = {},
): RepeatedFailureLog {
  const intervalMs = options.intervalMs ?? limits.availability.failureLogIntervalMs;
  const level = options.level ?? "warn";
  let episode: { sinceMs: number; attempts: number; unlogged: number; reason: string;
    fields: Record<string, unknown> } | undefined;
  let timer: NodeJS.Timeout | undefined;

  const flush = () => {
    if (episode === undefined) return;
    if (episode.unlogged === 0) {
      // A whole interval without a failure: the episode ends without a success line.
      episode = undefined;
      clearInterval(timer);
      timer = undefined;
      return;
    }
    const { unlogged, reason, fields, attempts, sinceMs } = episode;
    logger[level]({ ...fields, attempts: unlogged, attemptsTotal: attempts, reason,
      failingForMs: Date.now() - sinceMs, intervalMs },
    `${what}, ${unlogged} attempts in the last ${seconds(intervalMs)} s: ${reason}`);
    episode.unlogged = 0;
  };

  return {
    failed(error, fields = {}) {
      const reason = failureReason(error);
      if (episode !== undefined) {
        episode.attempts++;
        episode.unlogged++;
        episode.reason = reason;
        episode.fields = fields;
        return;
      }
      episode = { sinceMs: Date.now(), attempts: 1, unlogged: 0, reason, fields };
      logger[level]({ ...fields, err: error, attempts: 1, reason }, `${what}: ${reason}`);
      timer = setInterval(flush, intervalMs);
      timer.unref();
    },
    succeeded() {
      if (episode === undefined) return;
      const { attempts, sinceMs } = episode;
      const lastedMs = Date.now() - sinceMs;
      episode = undefined;
      clearInterval(timer);
      timer = undefined;
      const line = `${options.recovered ?? `${what}: over`} after ${attempts} failed attempts`
        + ` in ${seconds(lastedMs)} s`;
      logger.info({ attemptsTotal: attempts, failedForMs: lastedMs }, line);
    },
    failing() {
      if (episode === undefined) return undefined;
      return { sinceMs: episode.sinceMs, attempts: episode.attempts, reason: episode.reason };
    },
    close() {
      if (episode !== undefined && episode.unlogged > 0) flush();
      episode = undefined;
      clearInterval(timer);
      timer = undefined;
    },
  };
}
