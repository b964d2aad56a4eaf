import { Socket } from "node:net";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { netTestBounds } from "../support/net/bounds.ts";
import { startFaultProxy } from "../support/net/fault-proxy.ts";
import { partition, type HostFault } from "../support/net/host-faults.ts";
import { startPostgresInHost, type HostPostgres } from "../support/net/peers/postgres-peer.ts";
import { createTestHost, type TestHost } from "../support/net/test-host.ts";

/**
 * The situation "an unknown commit is never answered 'nothing stored'" needs: a client in the
 * root namespace sends COMMIT to a PostgreSQL in a test host, a partition takes the answer (or
 * the COMMIT itself), the client's own timeout leaves it not knowing, and after the heal the row
 * is there or not. Each case below makes one outcome on purpose, so a test of the service can
 * ask for the one it needs.
 */

interface OpenTransaction {
  client: pg.Client;
  socket: Socket;
  clientPort: number;
  socketError(): string | undefined;   // the first error of the socket itself (ECONNRESET)
}

type CommitOutcome = "committed" | "timeout" | string;   // or the error code

async function transactionInserting(postgres: HostPostgres, id: string): Promise<OpenTransaction> {
  const socket = new Socket();       // ours, so that a client giving up can drop it at once
  const client = new pg.Client({ connectionString: postgres.url(), stream: () => socket });
  let socketError: string | undefined;
  socket.on("error", (error: NodeJS.ErrnoException) => { socketError ??= error.code; });
  client.on("error", () => undefined);    // the socket dies under it on purpose
  await client.connect();
  await client.query("BEGIN");
  await client.query("INSERT INTO payments (id) VALUES ($1)", [id]);
  return { client, socket, clientPort: socket.localPort!, socketError: () => socketError };
}

/** Sends COMMIT, waits for its answer up to the client's own timeout, then drops the client. */
async function commit(open: OpenTransaction, timeoutMs: number): Promise<CommitOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<CommitOutcome>((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  // A reset can be heard just before COMMIT goes out (the rule answers the client's delayed ACK
  // of the INSERT): pg then refuses the query, and the socket's own error says why.
  const answered = open.client.query("COMMIT").then(() => "committed",
    (error: NodeJS.ErrnoException) => error.code ?? open.socketError() ?? error.message);
  const outcome = await Promise.race([answered, timedOut]);
  clearTimeout(timer);
  open.socket.resetAndDestroy();     // a client that gave up (or was reset) drops its connection
  return outcome;
}

describe("PostgreSQL in a test host", () => {
  let host: TestHost;
  let postgres: HostPostgres;
  const { faultedClientTimeoutMs, healthyClientTimeoutMs } = netTestBounds;
  const installed: HostFault[] = [];

  const query = async <T extends pg.QueryResultRow>(text: string, values: unknown[] = []) => {
    const client = new pg.Client(
      { connectionString: postgres.url(), connectionTimeoutMillis: healthyClientTimeoutMs });
    await client.connect();
    try {
      return (await client.query<T>(text, values)).rows;
    } finally {
      await client.end();
    }
  };
  const rowStored = async (id: string) =>
    (await query("SELECT 1 FROM payments WHERE id = $1", [id])).length === 1;
  const faulted = async (fault: Promise<HostFault>) => {
    installed.push(await fault);
    return installed.at(-1)!;
  };

  beforeAll(async () => {
    host = await createTestHost("postgres");
    postgres = await startPostgresInHost(host);
    await query("CREATE TABLE payments (id text PRIMARY KEY)");
  });
  afterEach(async () => {
    for (const fault of installed.splice(0)) await fault.heal();
  });
  afterAll(async () => {
    await postgres?.stop();
    await host?.remove();
  });

  it("is reached from the root namespace through the host's veth, on its address", async () => {
    const [ends] = await query<{ server: string; client: string }>(
      "SELECT host(inet_server_addr()) AS server, host(inet_client_addr()) AS client");
    expect(ends).toEqual({ server: host.address, client: host.rootAddress });
  });

  it("an answer lost during COMMIT: the client does not know; the row is there", async () => {
    const open = await transactionInserting(postgres, "answer-lost");
    // COMMIT arrives, its answer does not.
    const fault = await faulted(partition(host, { direction: "outbound" }));
    expect(await commit(open, faultedClientTimeoutMs)).toBe("timeout");
    await fault.heal();
    await postgres.sessionGone(open.clientPort);
    expect(await rowStored("answer-lost")).toBe(true);
  });

  it("a COMMIT lost on its way: the client does not know; the row is not there", async () => {
    const open = await transactionInserting(postgres, "commit-lost");
    const fault = await faulted(partition(host, { direction: "inbound" }));
    expect(await commit(open, faultedClientTimeoutMs)).toBe("timeout");
    await fault.heal();
    // The server holds the transaction open until it learns the client is gone (a keepalive
    // after the heal); only then is "not there" final.
    await postgres.sessionGone(open.clientPort);
    expect(await rowStored("commit-lost")).toBe(false);
  });

  it("a reset during COMMIT is heard at once, and the row is not there", async () => {
    const open = await transactionInserting(postgres, "commit-reset");
    const fault = await faulted(partition(host, { direction: "inbound", response: "reset" }));
    // The long timeout is the point: the reset answers before it. (EPIPE: the kernel had the
    // reset when pg wrote COMMIT.)
    expect(["ECONNRESET", "EPIPE"]).toContain(await commit(open, healthyClientTimeoutMs));
    await fault.heal();
    await postgres.sessionGone(open.clientPort);
    expect(await rowStored("commit-reset")).toBe(false);
  });

  it("a fault proxy on the host's path cuts an answer mid-transfer", async () => {
    // serve -> proxy (on the root end of the veth) -> PostgreSQL (on the host's address).
    const proxy = await startFaultProxy({ listen: { host: host.rootAddress },
      target: { host: postgres.host, port: postgres.port } });
    try {
      const client = new pg.Client(
        { host: proxy.host, port: proxy.port, user: "postgres", database: "postgres" });
      client.on("error", () => undefined);
      await client.connect();
      const answeredBefore = proxy.counts().bytesToClient;
      proxy.cut({ direction: "toClient", afterBytes: 4_096, how: "reset" });
      const outcome = await client.query("SELECT repeat('x', 100) FROM generate_series(1, 10000)")
        .then(() => "answered", (error: Error) => error.message);
      expect(outcome).not.toBe("answered");
      expect(proxy.counts().bytesToClient - answeredBefore).toBe(4_096);
      expect(proxy.counts().connectionsCut).toBe(1);
      // Node reports a reset that arrives with data as an end: pg says "terminated unexpectedly".
      console.log(`[proxy before PostgreSQL] the query ended with: ${outcome}`);
    } finally {
      await proxy.close();
    }
  });
});
