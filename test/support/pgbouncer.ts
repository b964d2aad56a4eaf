import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * Debian's PgBouncer for the tests of what a pooler in front changes (docs/decisions/0073). A
 * machine without it installs it with apt-get; when that fails the test fails, naming why: it
 * never skips.
 */
export function ensurePgBouncer(): void {
  if (onPath("pgbouncer")) return;
  if (process.getuid?.() !== 0) {
    throw new Error("PGBOUNCER MISSING: the pgbouncer tests need Debian's pgbouncer; run as root "
      + "(it is installed with apt-get) or: apt-get install -y pgbouncer");
  }
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const options = { env, stdio: ["ignore", 2, 2] as ["ignore", number, number] };
  const install = ["install", "-y", "-q", "--no-install-recommends", "pgbouncer"];
  try {
    execFileSync("apt-get", install, options);
  } catch {
    // A fresh machine may have no package lists yet.
    execFileSync("apt-get", ["update", "-q"], options);
    execFileSync("apt-get", install, options);
  }
  if (!onPath("pgbouncer")) {
    throw new Error("PGBOUNCER MISSING: apt-get installed pgbouncer but it is not on PATH");
  }
}

function onPath(command: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface PgBouncerDatabase {
  dbname: string;
  poolMode: "session" | "transaction";
}

export interface PgBouncer {
  /** A URL clearline connects to: the alias through this PgBouncer. */
  url(alias: string): string;
  stop(): Promise<void>;
}

/**
 * One PgBouncer in front of the server at `serverUrl`, serving each alias of `databases` with its
 * pool mode; `ignoreStartupParameters` are the parameters it drops instead of refusing the
 * connection. It refuses to run as root, so as root it runs as nobody (setpriv).
 */
export async function startPgBouncer(options: {
  serverUrl: string;
  databases: Record<string, PgBouncerDatabase>;
  ignoreStartupParameters?: string[];
}): Promise<PgBouncer> {
  const server = new URL(options.serverUrl);
  const folder = mkdtempSync(path.join(tmpdir(), "clearline-pgbouncer-"));
  chmodSync(folder, 0o777);
  const port = await freePort();
  const password = server.password ? ` password=${decodeURIComponent(server.password)}` : "";
  const credentials = `user=${decodeURIComponent(server.username)}${password}`;
  const host = `host=${server.hostname} port=${server.port || "5432"}`;
  const databases = Object.entries(options.databases).map(([alias, db]) =>
    `${alias} = ${host} dbname=${db.dbname} ${credentials} pool_mode=${db.poolMode}`);
  const ignored = options.ignoreStartupParameters;
  const config = path.join(folder, "pgbouncer.ini");
  writeFileSync(config, [
    "[databases]", ...databases, "",
    "[pgbouncer]", "listen_addr = 127.0.0.1", `listen_port = ${port}`, "unix_socket_dir =",
    // Every client is the server's user given above: no password file for the test.
    "auth_type = any", "default_pool_size = 20", "max_client_conn = 200",
    ...(ignored ? [`ignore_startup_parameters = ${ignored.join(",")}`] : []),
    "",
  ].join("\n"), { mode: 0o644 });
  const asNobody = process.getuid?.() === 0
    ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : [];
  const [command, ...args] = [...asNobody, "pgbouncer", config];
  const child = spawn(command ?? "pgbouncer", args, { stdio: ["ignore", "ignore", "pipe"] });
  await untilListening(child);
  return {
    url: (alias) => `postgres://clearline@127.0.0.1:${port}/${alias}`,
    async stop() {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      if (child.exitCode === null) child.kill("SIGINT");
      await exited;
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** Resolves when PgBouncer logs that it listens; rejects with its log when it exits first. */
function untilListening(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let log = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      log += chunk.toString();
      if (/process up/.test(log)) resolve();
    });
    child.once("exit", (code) => {
      reject(new Error(`pgbouncer exited (${String(code)}) before listening: ${log}`));
    });
  });
}
