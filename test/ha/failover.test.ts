import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runHa } from "../support/ha/command.ts";
import {
  layoutOf,
  memberStatuses,
  nodeUrl,
  primaryUrl,
  queryOnce,
  readState,
  waitFor,
  type ClusterState,
  type KilledPrimary,
} from "../support/ha/index.ts";

// Ports of its own, apart from a cluster someone keeps up with `npm run ha -- up` (15400).
const portBase = 15_500;
// A failover on this machine takes about 10 s (Patroni's ttl); a minute and a half is a bound
// that only a cluster which does not fail over at all reaches.
const failoverBoundMs = 90_000;
const replicationBoundMs = 30_000;
const onPorts = ["--port-base", String(portBase)];

let state: ClusterState;
let url: string;

async function withClient<T>(connectionString: string, use: (client: pg.Client) => Promise<T>) {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

interface FirstWrite {
  attempts: number;
  // When a connection through HAProxy first reached a primary (not in recovery).
  primaryReachedAt: number | undefined;
}

/** Retries one idempotent write through HAProxy until it is acknowledged. */
async function writeUntilAcknowledged(id: string): Promise<FirstWrite> {
  const seen: FirstWrite = { attempts: 0, primaryReachedAt: undefined };
  await waitFor(`a write through HAProxy acknowledged (${id})`, failoverBoundMs, async () => {
    seen.attempts += 1;
    const { rows } = await queryOnceLong(url, (client) =>
      client.query<{ standby: boolean }>("SELECT pg_is_in_recovery() AS standby"),
    );
    if (rows[0]?.standby !== false) throw new Error("the primary port reached a standby");
    seen.primaryReachedAt ??= Date.now();
    await queryOnceLong(url, (client) =>
      client.query("INSERT INTO ha_probe (id) VALUES ($1) ON CONFLICT DO NOTHING", [id]),
    );
    return true;
  });
  return seen;
}

/** One connection; a commit may wait for a new synchronous standby well past a probe's bound. */
async function queryOnceLong<T>(connectionString: string, use: (client: pg.Client) => Promise<T>) {
  const client = new pg.Client({
    connectionString,
    connectionTimeoutMillis: 3_000,
    query_timeout: 30_000,
  });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function killPrimary(): Promise<KilledPrimary> {
  const { lastLine } = await runHa(["kill-primary", "--json", ...onPorts]);
  return JSON.parse(lastLine) as KilledPrimary;
}

async function failOverAndWrite(id: string): Promise<KilledPrimary> {
  const killed = await killPrimary();
  const { attempts, primaryReachedAt } = await writeUntilAcknowledged(id);
  const killedAt = new Date(killed.killedAt).getTime();
  const seconds = (at: number | undefined) => (at ? ((at - killedAt) / 1000).toFixed(1) : "-");
  console.log(
    `kill -9 of ${killed.node}: a primary through HAProxy after ${seconds(primaryReachedAt)} s, ` +
      `the first write acknowledged after ${seconds(Date.now())} s (${attempts} attempts)`,
  );
  return killed;
}

/** Nodes whose Patroni is not running (killed by kill-primary and not restarted yet). */
async function stoppedNodes(): Promise<string[]> {
  const statuses = await memberStatuses(state);
  return statuses.filter((status) => status.patroniPid === undefined).map((s) => s.node.name);
}

function portOf(name: string): number {
  const node = layoutOf(state).nodes.find((candidate) => candidate.name === name);
  if (!node) throw new Error(`no node ${name}`);
  return node.postgresPort;
}

beforeAll(async () => {
  // What an earlier, interrupted run left on these ports is removed first (down is idempotent).
  await runHa(["down", ...onPorts]);
  const started = await runHa(["up", ...onPorts]);
  console.log(started.stderr.trimEnd());
  url = started.lastLine;
  const known = readState(portBase);
  if (!known) throw new Error(`up printed ${url} but wrote no state file`);
  state = known;
  await withClient(url, (client) =>
    client.query("CREATE TABLE ha_probe (id text PRIMARY KEY, at timestamptz DEFAULT now())"),
  );
});

afterAll(async () => {
  await runHa(["down", ...onPorts]);
});

describe("the HA test cluster", () => {
  it("up prints a URL through HAProxy whose commits reach the synchronous standby", async () => {
    expect(url).toBe(primaryUrl(state));
    const sync = await withClient(url, async (client) => {
      await client.query("INSERT INTO ha_probe (id) VALUES ('first')");
      const { rows } = await client.query<{ name: string }>(
        "SELECT application_name AS name FROM pg_stat_replication WHERE sync_state = 'sync'",
      );
      return rows;
    });
    expect(sync).toHaveLength(1);
    const standby = layoutOf(state).nodes.find((node) => node.name === sync[0]?.name);
    if (!standby) throw new Error(`the sync standby ${sync[0]?.name} is not a node of the cluster`);
    const standbyUrl = nodeUrl(state, standby);
    const [recovery] = await queryOnce<{ standby: boolean }>(
      standbyUrl,
      "SELECT pg_is_in_recovery() AS standby",
    );
    expect(recovery?.standby).toBe(true);
    // Acknowledged means flushed on the standby; replaying it there follows within moments.
    await waitFor(`the row on the standby ${standby.name}`, replicationBoundMs, async () => {
      const rows = await queryOnce(standbyUrl, "SELECT 1 FROM ha_probe WHERE id = 'first'");
      return rows.length === 1 ? true : undefined;
    });
  });

  it("a commit acknowledged before kill-primary survives the failover, same URL", async () => {
    const before = await withClient(url, async (client) => {
      await client.query("INSERT INTO ha_probe (id) VALUES ('before-first-kill')");
      return (await client.query<{ port: number }>("SELECT inet_server_port() AS port")).rows[0];
    });
    const killed = await failOverAndWrite("after-first-kill");
    expect(portOf(killed.node)).toBe(before?.port);
    const [after] = await queryOnce<{ port: number; standby: boolean; ids: string[] }>(
      url,
      `SELECT inet_server_port() AS port, pg_is_in_recovery() AS standby,
              (SELECT array_agg(id ORDER BY id) FROM ha_probe) AS ids`,
    );
    expect(after?.standby).toBe(false);
    expect(after?.port).not.toBe(before?.port);
    const expected = ["before-first-kill", "after-first-kill"];
    expect(after?.ids).toEqual(expect.arrayContaining(expected));
  });

  it("restart-node brings a killed node back as a standby; kill the primary again", async () => {
    for (const name of await stoppedNodes()) await runHa(["restart-node", name, ...onPorts]);
    expect(await stoppedNodes()).toEqual([]);
    await withClient(url, (client) =>
      client.query("INSERT INTO ha_probe (id) VALUES ('before-second-kill')"),
    );
    const killed = await failOverAndWrite("after-second-kill");
    await runHa(["restart-node", killed.node, ...onPorts]);
    const back = (await memberStatuses(state)).find((status) => status.node.name === killed.node);
    expect(back?.member?.state).toBe("running");
    expect(["replica", "sync_standby"]).toContain(back?.member?.role);
    const [after] = await queryOnce<{ ids: string[] }>(
      url,
      "SELECT array_agg(id ORDER BY id) AS ids FROM ha_probe",
    );
    const expected = ["before-second-kill", "after-second-kill"];
    expect(after?.ids).toEqual(expect.arrayContaining(expected));
  });
});
