import { execFile } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const BIN = "/usr/lib/postgresql/15/bin";

/**
 * A PostgreSQL 15 server of the test's own (initdb + pg_ctl in a temporary folder, on a free
 * loopback port), for tests that stop and start the database under a running service. Never the
 * machine's stock server on 5432: other sessions use it. As root the server runs as `postgres`.
 */
export interface OwnPostgres {
  url: string;
  port: number;
  start(): Promise<void>;
  /** `pg_ctl stop -m immediate`: the server goes as in a crash, connections are cut. */
  stopImmediately(): Promise<void>;
  destroy(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function createOwnPostgres(): Promise<OwnPostgres> {
  const root = userInfo().uid === 0;
  const folder = mkdtempSync(path.join(tmpdir(), "clearline-own-pg-"));
  if (root) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    chownSync(folder, Number(stdout.trim()), Number(gid.trim()));
  }
  const asServerUser = (command: string, args: string[]) => (root
    ? run("runuser", ["-u", "postgres", "--", path.join(BIN, command), ...args])
    : run(path.join(BIN, command), args));
  const dataDir = path.join(folder, "data");
  await asServerUser("initdb", ["-D", dataDir, "-A", "trust", "-U", "postgres", "--no-locale", "-E", "UTF8"]);
  const port = await freePort();
  const options = `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = async () => {
    await asServerUser("pg_ctl", ["-D", dataDir, "-o", options, "-l", path.join(folder, "server.log"), "-w", "start"]);
  };
  const stopImmediately = async () => {
    await asServerUser("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    stopImmediately,
    async destroy() {
      await stopImmediately().catch(() => undefined);
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
