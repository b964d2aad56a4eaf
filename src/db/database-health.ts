import pg from "pg";
import { limits } from "../config/limits.ts";
import type { Logger } from "../observability/logger.ts";
import type { CheckResult } from "../observability/readiness.ts";
import { failureReason, repeatedFailureLog } from "../observability/repeated-failure-log.ts";
import type { EmbeddedServerControl } from "./embedded.ts";

/**
 * How `clearline serve` lives through losing its database (docs/decisions/0081). It asks the
 * database `SELECT 1` on a connection of its own every second; when that fails it keeps asking
 * with a backoff (250 ms doubling to 2 s) and says so: /readyz is not ready with the reason,
 * /livez fails once no database answered for `livenessWithoutDatabaseMs`, and the failures are
 * logged once per interval with their count (docs/decisions/0082). Requests meanwhile fail on
 * their own and are answered 503 (HTTP) or 96 (ISO 8583) by their adapters.
 *
 * When this process owns an embedded server and its postmaster is gone, the server is started
 * again on the same data directory and port, at most `embeddedRestartAttemptsMax` times with a
 * backoff; after the last failed attempt `onGaveUp` is told why, and serve exits non-zero.
 */
export interface DatabaseHealthOptions {
  url: string;
  logger: Logger;
  /** An embedded server this process owns: restarted when its postmaster is gone. */
  server?: EmbeddedServerControl;
  livenessWithoutDatabaseMs: number;
  onGaveUp(error: DatabaseLostError): void;
}

/** The embedded server died and did not start again within its bound. */
export class DatabaseLostError extends Error {
  readonly code = "DB_EMBEDDED_RESTART_FAILED";
  constructor(message: string) {
    super(`DB_EMBEDDED_RESTART_FAILED: ${message}`);
    this.name = "DatabaseLostError";
  }
}

interface Outage {
  sinceMs: number;      // epoch ms of the first failed probe (or the postmaster found gone)
  probes: number;       // failed probes (and failed restarts) since
  reason: string;
  restart?: { attempt: number; of: number };
}

function seconds(ms: number): string {
  return (ms / 1_000).toFixed(1);
}

export class DatabaseHealth {
  private outage: Outage | undefined;
  private client: pg.Client | undefined;
  private clientError: Error | undefined;
  private stopped = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> = Promise.resolve();
  private readonly unreachable;

  constructor(private readonly options: DatabaseHealthOptions) {
    this.unreachable = repeatedFailureLog(options.logger, "database unreachable",
      { recovered: "database reachable again" });
  }

  start(): void {
    this.loop = this.run();
  }

  /** Stops probing (before the database is closed, so that a stop is never taken for a death). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    this.unreachable.close();
    await this.dropClient();
  }

  /** For /readyz: not ready while the database does not answer, with why and since when. */
  readiness(): CheckResult {
    const outage = this.outage;
    if (outage === undefined) return { ok: true };
    const forS = seconds(Date.now() - outage.sinceMs);
    if (outage.restart !== undefined) {
      return { ok: false, reason: `the embedded PostgreSQL died ${forS} s ago (${outage.reason});`
        + ` restart attempt ${outage.restart.attempt} of ${outage.restart.of}` };
    }
    return { ok: false, reason: `database unreachable for ${forS} s`
      + ` (${outage.probes} failed probes): ${outage.reason}; retrying with backoff` };
  }

  /** For /livez: fails once no database answered for the bound, so a supervisor restarts us. */
  liveness(): CheckResult {
    const outage = this.outage;
    const boundMs = this.options.livenessWithoutDatabaseMs;
    if (outage === undefined || Date.now() - outage.sinceMs < boundMs) return { ok: true };
    return { ok: false, reason: `no database for ${seconds(Date.now() - outage.sinceMs)} s`
      + ` (bound ${seconds(boundMs)} s): ${outage.reason}` };
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const server = this.options.server;
      if (server !== undefined && !server.postmasterAlive()) {
        await this.dropClient();   // its connection died with the server
        if (!(await this.restart(server))) return;
        continue;
      }
      const failure = await this.probe();
      if (failure === undefined) this.answered();
      else this.failed(failure);
      await this.pause(this.outage === undefined
        ? limits.availability.databaseProbeIntervalMs
        : backoffMs(this.outage.probes, limits.availability.databaseRetryBackoffBaseMs,
          limits.availability.databaseRetryBackoffCapMs));
    }
  }

  /** One `SELECT 1` on the probe's own connection, opened again after any failure. */
  private async probe(): Promise<unknown> {
    const timeoutMs = limits.availability.databaseProbeTimeoutMs;
    try {
      if (this.client === undefined) {
        const client = new pg.Client({
          connectionString: this.options.url, connectionTimeoutMillis: timeoutMs,
          query_timeout: timeoutMs, application_name: "clearline health",
        });
        // A dropped idle connection: the next probe fails, and names this error, not pg's
        // "Client has encountered a connection error and is not queryable".
        client.on("error", (error) => { this.clientError = error; });
        this.clientError = undefined;
        this.client = client;
        await client.connect();
      }
      await this.client.query("SELECT 1");
      return undefined;
    } catch (error) {
      const cause = this.clientError ?? error;
      await this.dropClient();
      return cause;
    }
  }

  private async dropClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private answered(): void {
    this.outage = undefined;
    this.unreachable.succeeded();
  }

  private failed(error: unknown): void {
    const reason = failureReason(error);
    if (this.outage === undefined) this.outage = { sinceMs: Date.now(), probes: 0, reason };
    this.outage.probes++;
    this.outage.reason = reason;
    this.unreachable.failed(error);
  }

  /** Starts the embedded server again, with a backoff, at most the bound; false: gave up. */
  private async restart(server: EmbeddedServerControl): Promise<boolean> {
    const { logger } = this.options;
    const of = limits.availability.embeddedRestartAttemptsMax;
    const diedMs = this.outage?.sinceMs ?? Date.now();
    this.outage = { sinceMs: diedMs, probes: this.outage?.probes ?? 0, reason: "postmaster gone" };
    logger.error({ attemptsMax: of },
      `the embedded PostgreSQL died; starting it again (at most ${of} attempts)`);
    let lastReason = "postmaster gone";
    for (let attempt = 1; attempt <= of; attempt++) {
      this.outage.restart = { attempt, of };
      await this.pause(backoffMs(attempt, limits.availability.embeddedRestartBackoffBaseMs,
        limits.availability.embeddedRestartBackoffCapMs));
      if (this.stopped) return false;
      try {
        await server.restart();
        this.outage.restart = undefined;
        logger.warn({ attempt, downMs: Date.now() - diedMs },
          `the embedded PostgreSQL runs again (attempt ${attempt} of ${of},`
          + ` ${seconds(Date.now() - diedMs)} s after it died)`);
        return true;
      } catch (error) {
        lastReason = error instanceof Error ? error.message : String(error);
        this.outage.probes++;
        logger.warn({ attempt, err: error },
          `starting the embedded PostgreSQL again failed (attempt ${attempt} of ${of})`);
      }
    }
    this.options.onGaveUp(new DatabaseLostError(`the embedded PostgreSQL died and did not start`
      + ` again in ${of} attempts over ${seconds(Date.now() - diedMs)} s; last: ${lastReason}`));
    return false;
  }

  private pause(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}

/** `base` doubled per earlier attempt (the first waits `base`), never past `cap`. */
function backoffMs(attempt: number, baseMs: number, capMs: number): number {
  return Math.min(capMs, baseMs * 2 ** Math.min(30, Math.max(0, attempt - 1)));
}
