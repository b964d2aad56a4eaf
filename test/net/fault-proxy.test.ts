import { once } from "node:events";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFaultProxy, type FaultProxy } from "../support/net/fault-proxy.ts";

// The proxy is pure Node: these run on loopback, without namespaces.

interface TestClient {
  socket: Socket;
  received(): Buffer;
  /** Resolves once at least `count` bytes arrived. */
  receivedAtLeast(count: number): Promise<void>;
  /** How the connection ended: "end" (FIN), or the error code (ECONNRESET, ECONNREFUSED). */
  ended: Promise<string>;
}

function clientOf(socket: Socket): TestClient {
  const chunks: Buffer[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const size = () => chunks.reduce((sum, c) => sum + c.length, 0);
  socket.on("data", (chunk: Buffer) => {
    chunks.push(chunk);
    for (const w of waiters.filter((w) => size() >= w.count)) w.resolve();
  });
  const ended = new Promise<string>((resolve) => {
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    socket.once("end", () => resolve("end"));
  });
  return {
    socket, ended,
    received: () => Buffer.concat(chunks),
    receivedAtLeast: (count) => size() >= count ? Promise.resolve() :
      new Promise((resolve) => waiters.push({ count, resolve })),
  };
}

const connecting = (port: number) =>
  clientOf(connect({ host: "127.0.0.1", port, allowHalfOpen: true }));

async function connected(port: number): Promise<TestClient> {
  const client = connecting(port);
  await once(client.socket, "connect");
  return client;
}

/**
 * How the proxy closed a connection, as the client's kernel saw it. Node (libuv) reports a reset
 * that arrives together with the last data as an end, so an end is told apart by writing after
 * it: a half-closed connection (FIN) takes the write and closes cleanly when we end too; a reset
 * one has no connection left to write to (EPIPE or ECONNRESET).
 */
async function closeKindOf(client: TestClient): Promise<"reset" | "fin"> {
  const ended = await client.ended;
  if (ended === "ECONNRESET") return "reset";
  if (ended !== "end") throw new Error(`unexpected ${ended}`);
  const afterEnd = new Promise<string>((resolve) => {
    client.socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
    client.socket.once("close", (hadError) => { if (!hadError) resolve("closed"); });
  });
  client.socket.end("after the end");
  const outcome = await afterEnd;
  if (outcome === "closed") return "fin";
  if (outcome === "EPIPE" || outcome === "ECONNRESET") return "reset";
  throw new Error(`unexpected ${outcome} after the end`);
}

const frame = (bytes: number) => Buffer.from(Array.from({ length: bytes }, (_, i) => i % 251));

describe("the fault proxy", () => {
  let target: Server;
  let targetPort: number;
  const targetEnds: string[] = [];          // how each target-side connection ended
  let proxy: FaultProxy;

  beforeAll(async () => {
    target = createServer((socket) => {
      socket.on("error", (error: NodeJS.ErrnoException) => targetEnds.push(error.code ?? "error"));
      socket.on("end", () => targetEnds.push("end"));
      socket.pipe(socket);
    });
    target.listen(0, "127.0.0.1");
    await once(target, "listening");
    targetPort = (target.address() as AddressInfo).port;
  });
  afterAll(async () => {
    target.close();
  });
  afterEach(async () => {
    await proxy.close();
  });

  const start = async (bounds: { connectionsMax?: number; queuedBytesMax?: number } = {}) => {
    const target = { host: "127.0.0.1", port: targetPort };
    proxy = await startFaultProxy({ listen: { host: "127.0.0.1" }, target, ...bounds });
  };

  it("forwards both ways and counts bytes and connections", async () => {
    await start();
    const client = await connected(proxy.port);
    client.socket.write(frame(100));
    await client.receivedAtLeast(100);
    expect(client.received()).toEqual(frame(100));
    expect(proxy.counts()).toMatchObject(
      { connectionsAccepted: 1, connectionsOpen: 1, bytesToTarget: 100, bytesToClient: 100 });
    client.socket.end();
    await proxy.until((c) => c.connectionsOpen === 0);
  });

  it("delays each chunk by the set delay, in order", async () => {
    await start();
    const client = await connected(proxy.port);
    const delayMs = 150;
    proxy.delay({ direction: "toClient", delayMs });
    const sentAt = performance.now();
    client.socket.write("first;");
    await proxy.until((c) => c.bytesToTarget === 6);
    client.socket.write("second");
    await client.receivedAtLeast(12);
    const elapsedMs = performance.now() - sentAt;
    // A lower bound only: a loaded machine makes it later, never earlier (timers fire at most
    // 1 ms early).
    expect(elapsedMs).toBeGreaterThanOrEqual(delayMs - 1);
    expect(client.received().toString()).toBe("first;second");
    expect(proxy.counts().chunksDelayed).toBeGreaterThanOrEqual(1);
    console.log(`[fault proxy] ${delayMs} ms per chunk: answered after ${elapsedMs.toFixed(0)} ms`);
  });

  it("delivers a delayed answer, then the end, after the target has closed", async () => {
    await start();
    const client = await connected(proxy.port);
    proxy.delay({ direction: "toClient", delayMs: 100 });
    client.socket.end("last words");         // the echo target answers and closes at once
    await client.receivedAtLeast(10);
    expect(await client.ended).toBe("end");
    expect(client.received().toString()).toBe("last words");
    await proxy.until((c) => c.connectionsOpen === 0);
  });

  it("stalls mid-frame: the client has a prefix, the proxy holds the rest until heal", async () => {
    await start();
    const client = await connected(proxy.port);
    proxy.stall({ direction: "toClient", afterBytes: 40 });
    client.socket.write(frame(100));
    await client.receivedAtLeast(40);
    await proxy.until((c) => c.bytesHeld === 60);
    expect(client.received()).toEqual(frame(100).subarray(0, 40));
    await proxy.heal();
    await client.receivedAtLeast(100);
    expect(client.received()).toEqual(frame(100));
  });

  it("cuts after N bytes with a reset: the client sees exactly N bytes, then a reset", async () => {
    await start();
    const client = await connected(proxy.port);
    proxy.cut({ direction: "toClient", afterBytes: 300, how: "reset" });
    client.socket.write(frame(1_000));
    expect(await closeKindOf(client)).toBe("reset");
    expect(client.received()).toEqual(frame(1_000).subarray(0, 300));
    await proxy.until((c) => c.connectionsOpen === 0);
    expect(proxy.counts().connectionsCut).toBe(1);
  });

  it("cuts after N bytes with a FIN: the client sees exactly N bytes, then an end", async () => {
    await start();
    const client = await connected(proxy.port);
    proxy.cut({ direction: "toClient", afterBytes: 300, how: "fin" });
    client.socket.write(frame(1_000));
    expect(await closeKindOf(client)).toBe("fin");
    expect(client.received()).toEqual(frame(1_000).subarray(0, 300));
    await proxy.until((c) => c.connectionsOpen === 0);
    expect(targetEnds.at(-1)).toBe("end");
  });

  it("refuses new connections while open ones go on, and accepts again after heal", async () => {
    await start();
    const open = await connected(proxy.port);
    await proxy.refuseConnections();
    expect(await connecting(proxy.port).ended).toBe("ECONNREFUSED");
    open.socket.write("still here");
    await open.receivedAtLeast(10);
    await proxy.heal();
    const again = await connected(proxy.port);
    again.socket.write("back");
    await again.receivedAtLeast(4);
    expect(again.received().toString()).toBe("back");
    open.socket.destroy();
    again.socket.destroy();
  });

  it("holds at most queuedBytesMax of a stalled direction, then stops reading", async () => {
    const queuedBytesMax = 65_536;
    await start({ queuedBytesMax });
    const client = await connected(proxy.port);
    proxy.stall({ direction: "toTarget", afterBytes: 0 });
    const sentBytes = 8 * 1_048_576;
    client.socket.write(Buffer.alloc(sentBytes, 1));
    await proxy.until((c) => c.sourcePauses >= 1);
    // It stops at the read that crosses the bound: below the bound plus one socket read.
    expect(proxy.counts().bytesHeld).toBeGreaterThanOrEqual(queuedBytesMax);
    expect(proxy.counts().bytesHeld).toBeLessThan(queuedBytesMax + 65_536);
    expect(proxy.counts().bytesToTarget).toBe(0);
    await proxy.heal();
    await client.receivedAtLeast(sentBytes);
    expect(proxy.counts().bytesToTarget).toBe(sentBytes);
    client.socket.destroy();
  });

  it("resets a connection past connectionsMax and counts it", async () => {
    await start({ connectionsMax: 2 });
    const first = await connected(proxy.port);
    const second = await connected(proxy.port);
    expect(await connecting(proxy.port).ended).toBe("ECONNRESET");
    expect(proxy.counts()).toMatchObject(
      { connectionsAccepted: 2, connectionsRefused: 1, connectionsOpen: 2 });
    first.socket.destroy();
    second.socket.destroy();
  });
});
