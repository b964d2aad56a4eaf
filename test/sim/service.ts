import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Pool } from "../../src/db/pool.ts";
import { simBounds } from "./bounds.ts";
import { simApplicationName } from "./database.ts";

const BIN = fileURLToPath(new URL("../../src/cli/clearline.mjs", import.meta.url));

export interface ServiceEnvironment {
  databaseUrl: string;
  home: string;              // CLEARLINE_HOME, kept across restarts like a real deployment's
  cardHashSecretHex: string; // the same card keys across restarts
  projectionIntervalMs: number;
  extraEnvironment?: Record<string, string>; // the soak's peers: where NATS is, and so on
}

/**
 * `clearline serve` as a real child process: started, killed with SIGKILL at any moment, and
 * restarted on the same database and home. Each start picks free ports (the old ones may linger).
 */
export class ServiceProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private stderrTail = "";
  baseUrl = "";
  iso8583Port = 0;
  starts = 0;
  kills = 0;

  constructor(private readonly environment: ServiceEnvironment, private readonly pool: Pool) {}

  async start(): Promise<void> {
    const child = spawn(process.execPath, [BIN, "serve", "--http-port", "0", "--iso8583-port", "0"], {
      env: {
        ...process.env,
        DATABASE_URL: this.environment.databaseUrl,
        CLEARLINE_HOME: this.environment.home,
        CLEARLINE_CARD_HASH_SECRET: this.environment.cardHashSecretHex,
        CLEARLINE_PROJECTION_INTERVAL_MS: String(this.environment.projectionIntervalMs),
        CLEARLINE_LOG_LEVEL: "warn",
        ...this.environment.extraEnvironment,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.once("exit", () => resolve()));
    // The service's log lines (warn and above), kept for the report of a step that went wrong.
    child.stdout?.on("data", (chunk: Buffer) => { this.stderrTail = (this.stderrTail + chunk.toString()).slice(-4_000); });
    let seen = "";
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not start within ${simBounds.settleTimeoutMs} ms: ${seen}`)), simBounds.settleTimeoutMs);
      child.stderr?.on("data", (chunk: Buffer) => {
        seen += chunk.toString();
        this.stderrTail = (this.stderrTail + chunk.toString()).slice(-4_000);
        const http = /serving on (http:\/\/\S+)/.exec(seen);
        const iso = /ISO 8583 scheme endpoint on port (\d+)/.exec(seen);
        if (http?.[1] && iso?.[1]) {
          clearTimeout(timer);
          this.baseUrl = http[1];
          this.iso8583Port = Number(iso[1]);
          resolve();
        }
      });
      void this.exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`serve exited before serving: ${seen}`));
      });
    });
    this.starts++;
  }

  /** kill -9, then wait until PostgreSQL has dropped every session of the dead process (their transactions rolled back). */
  async kill9(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGKILL");
    await this.exited;
    this.kills++;
    await this.waitForNoServiceSessions();
  }

  async restart(): Promise<void> {
    await this.kill9();
    await this.start();
  }

  /** A graceful stop at the end of a run. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    await this.exited;
  }

  get databaseUrl(): string {
    return this.environment.databaseUrl;
  }

  get home(): string {
    return this.environment.home;
  }

  /** Whether the last started process is still running (a crash the run did not cause is a finding). */
  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  get exitDescription(): string {
    return this.child ? `exit code ${this.child.exitCode}, signal ${this.child.signalCode}` : "never started";
  }

  get recentStderr(): string {
    return this.stderrTail;
  }

  private async waitForNoServiceSessions(): Promise<void> {
    const deadline = Date.now() + simBounds.settleTimeoutMs;
    for (;;) {
      const { rows } = await this.pool.query<{ n: bigint }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND application_name <> $1",
        [simApplicationName],
      );
      if (rows[0]?.n === 0n) return;
      if (Date.now() > deadline) throw new Error("the killed service's database sessions did not end");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
