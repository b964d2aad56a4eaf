import { execFileSync } from "node:child_process";
import { appendFileSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { netBounds } from "../bounds.ts";
import { runCommand } from "../commands.ts";
import { tempFolderPrefix } from "../host-names.ts";
import type { HostProcess } from "../host-process.ts";
import { NetworkHarnessUnavailable } from "../prerequisites.ts";
import type { TestHost } from "../test-host.ts";
import { pollUntil } from "../wait.ts";

/**
 * A PostgreSQL of its own in a test host: the machine's PostgreSQL binaries (15 on Debian 12;
 * CLEARLINE_NET_POSTGRES_BIN names another bin folder), a fresh cluster in a temp folder owned by
 * the postgres user, listening on the host's address only, trusting the host's /30 (the root
 * namespace's end of the veth is the only other address on it). The stock server on 127.0.0.1 is
 * never touched.
 */
export interface HostPostgres {
  host: string;
  port: number;
  url(database?: string): string;
  process: HostProcess;
  dataFolder: string;
  /** Backends serving a client connected from `clientPort` (pg_stat_activity). */
  sessionsFrom(clientPort: number): Promise<{ pid: number; state: string | null }[]>;
  /** Waits until no backend serves `clientPort`: its transaction, committed or not, is settled. */
  sessionGone(clientPort: number): Promise<void>;
  stop(): Promise<void>;
}

const postgresPort = 5432;       // the host's own namespace: the stock server's port is free there
const user = "postgres";         // PostgreSQL refuses to run as root
const asPostgres = ["setpriv", `--reuid=${user}`, `--regid=${user}`, "--init-groups", "--"];

function binFolder(): string {
  const folder = process.env.CLEARLINE_NET_POSTGRES_BIN ?? "/usr/lib/postgresql/15/bin";
  if (!existsSync(path.join(folder, "initdb")) || !existsSync(path.join(folder, "postgres"))) {
    throw new NetworkHarnessUnavailable(`no PostgreSQL binaries (initdb, postgres) in ${folder}: ` +
      "install the Debian package postgresql-15, or set CLEARLINE_NET_POSTGRES_BIN");
  }
  return folder;
}

function postgresUserIds(): { uid: number; gid: number } {
  try {
    const id = (flag: string) =>
      Number(execFileSync("id", [flag, user], { encoding: "utf8" }).trim());
    return { uid: id("-u"), gid: id("-g") };
  } catch {
    throw new NetworkHarnessUnavailable(`no \`${user}\` user to run PostgreSQL as (it refuses ` +
      "root): install the Debian package postgresql-15, which creates it");
  }
}

function settingsFor(host: TestHost, data: string): string[] {
  return [
    `listen_addresses = '${host.address}'`,
    `port = ${postgresPort}`,
    `unix_socket_directories = '${data}'`,
    // Short keepalives: a backend whose client vanished during a partition finds out soon after
    // the heal, so an unknown COMMIT's transaction ends (committed or not) instead of holding
    // its locks.
    `tcp_keepalives_idle = ${netBounds.postgresKeepaliveIdleSeconds}`,
    `tcp_keepalives_interval = ${netBounds.postgresKeepaliveIntervalSeconds}`,
    `tcp_keepalives_count = ${netBounds.postgresKeepaliveCount}`,
    // A killed process (not the machine) loses nothing without fsync: the page cache survives it.
    "fsync = off",
    "",
  ];
}

/** A cluster in a new temp folder: initdb as postgres, then host trust for the host's /30. */
async function initCluster(bin: string, host: TestHost): Promise<string> {
  const folder = mkdtempSync(path.join(tmpdir(), `${tempFolderPrefix}${process.pid}-postgres-`));
  const { uid, gid } = postgresUserIds();
  chownSync(folder, uid, gid);
  const data = path.join(folder, "data");
  await runCommand(asPostgres[0]!, [...asPostgres.slice(1), path.join(bin, "initdb"),
    "-D", data, "-U", user, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"]);
  const hba = ["local all all trust", `host all all ${host.subnet.cidr} trust`, ""];
  writeFileSync(path.join(data, "pg_hba.conf"), hba.join("\n"));
  appendFileSync(path.join(data, "postgresql.conf"), settingsFor(host, data).join("\n"));
  return folder;
}

async function sessionsFrom(url: string, clientPort: number) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number; state: string | null }>(
      // Not our own backend, should the kernel hand the vanished client's port to this one.
      "SELECT pid, state FROM pg_stat_activity WHERE client_port = $1 AND pid <> pg_backend_pid()",
      [clientPort]);
    return rows;
  } finally {
    await client.end();
  }
}

/** Starts PostgreSQL in `host` and resolves once it accepts connections. */
export async function startPostgresInHost(host: TestHost): Promise<HostPostgres> {
  const bin = binFolder();
  const folder = await initCluster(bin, host);
  const server = host.spawn(path.join(bin, "postgres"), ["-D", path.join(folder, "data")],
    { user, label: `PostgreSQL in ${host.label}`, stopSignal: "SIGINT" });   // fast shutdown
  const ready = "database system is ready to accept connections";
  await server.waitForLine((line) => line.includes(ready), "ready");
  const url = (database = "postgres") =>
    `postgres://${user}@${host.address}:${postgresPort}/${database}`;
  return {
    host: host.address, port: postgresPort, url, process: server, dataFolder: folder,
    sessionsFrom: (clientPort) => sessionsFrom(url(), clientPort),
    sessionGone: (clientPort) => pollUntil(
      async () => (await sessionsFrom(url(), clientPort)).length === 0,
      `the backend of client port ${clientPort} to end`, netBounds.orphanSessionWaitMs),
    async stop() {
      await server.stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
