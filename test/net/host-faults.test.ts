import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { once } from "node:events";
import { get } from "node:http";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { netTestBounds } from "../support/net/bounds.ts";
import { faultRulesIn, loss, narrowLink, partition, type HostFault, type RuleFault }
  from "../support/net/host-faults.ts";
import { startEchoPeer, type EchoPeer } from "../support/net/peers/node-peer.ts";
import { createTestHost, type TestHost } from "../support/net/test-host.ts";
import { pollUntil } from "../support/net/wait.ts";

type Outcome = "ok" | "timeout" | string;    // or the error code: ECONNRESET, ECONNREFUSED

interface Connection { outcome: Outcome; socket: Socket }

/** Connects from the root namespace, giving up after the client's own timeout. */
function connectFromRoot(host: TestHost, port: number, timeoutMs: number): Promise<Connection> {
  const socket = connect({ host: host.address, port, timeout: timeoutMs });
  return new Promise((resolve) => {
    socket.once("connect", () => { socket.setTimeout(0); resolve({ outcome: "ok", socket }); });
    socket.once("timeout", () => { socket.destroy(); resolve({ outcome: "timeout", socket }); });
    socket.once("error", (error: NodeJS.ErrnoException) =>
      resolve({ outcome: error.code ?? error.message, socket }));
  });
}

/** Sends `text` on an open echo connection and waits for it back, up to the client's timeout. */
function exchange(socket: Socket, text: string, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    let answer = "";
    const done = (outcome: Outcome) => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("error", onError);
      resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      answer += chunk.toString();
      if (answer.length >= text.length) done(answer === text ? "ok" : `wrong answer ${answer}`);
    };
    const onError = (error: NodeJS.ErrnoException) => done(error.code ?? error.message);
    const timer = setTimeout(() => done("timeout"), timeoutMs);
    socket.on("data", onData);
    socket.on("error", onError);
    socket.write(text);
  });
}

interface RootUdp {
  socket: UdpSocket;
  port: number;
  texts: string[];
  received(text: string): Promise<void>;
}

/** A UDP socket in the root namespace on the host's root address, keeping what it receives. */
async function rootUdp(host: TestHost): Promise<RootUdp> {
  const socket = createSocket("udp4");
  const texts: string[] = [];
  socket.on("message", (message) => { texts.push(message.toString()); socket.emit("kept"); });
  socket.bind(0, host.rootAddress);
  await once(socket, "listening");
  return {
    socket, texts, port: socket.address().port,
    received: (text) => new Promise((resolve) => {
      const check = () => { if (texts.includes(text)) { socket.off("kept", check); resolve(); } };
      socket.on("kept", check);
      check();
    }),
  };
}

const sendUdp = (socket: UdpSocket, text: string, to: { host: string; port: number }) =>
  new Promise<void>((resolve, reject) =>
    socket.send(text, to.port, to.host, (error) => error ? reject(error) : resolve()));

const droppedAtLeast = (fault: RuleFault, packets: number) => pollUntil(
  async () => (await fault.matched()).packets >= packets, `${fault.description} to match`);

/** TCP segments the host's namespace retransmitted (RetransSegs of its own /proc/net/snmp). */
async function retransmittedBy(host: TestHost): Promise<number> {
  const [names, values] = (await host.run("cat", ["/proc/net/snmp"])).split("\n")
    .filter((line) => line.startsWith("Tcp:")).map((line) => line.trim().split(/\s+/));
  return Number(values![names!.indexOf("RetransSegs")]);
}

/** One HTTP GET of `size` bytes from the host's peer; resolves with the bytes received. */
const download = (host: TestHost, peer: EchoPeer, size: number) => new Promise<number>(
  (resolve, reject) => {
    const request = { host: host.address, port: peer.httpPort, path: `/bytes?count=${size}`,
      timeout: netTestBounds.healthyClientTimeoutMs };
    get(request, (response) => {
      let bytes = 0;
      response.on("data", (chunk: Buffer) => { bytes += chunk.length; });
      response.on("end", () => resolve(bytes));
      response.on("error", reject);
    }).on("error", reject);
  });

describe("faults of a test host's link", () => {
  let host: TestHost;
  let peer: EchoPeer;
  const { faultedClientTimeoutMs, healthyClientTimeoutMs } = netTestBounds;
  const installed: HostFault[] = [];
  const track = <T extends HostFault>(fault: T): T => { installed.push(fault); return fault; };
  const connectPeer = (timeoutMs: number) => connectFromRoot(host, peer.tcpPort, timeoutMs);

  beforeAll(async () => {
    host = await createTestHost("faults");
    peer = await startEchoPeer(host);
  });
  afterAll(async () => {
    await host?.remove();
  });
  afterEach(async () => {
    // A test that failed before its heal still heals (a second heal does nothing); then no fault
    // rule is left, and traffic flows again.
    for (const fault of installed.splice(0)) await fault.heal();
    expect(await faultRulesIn(host)).toEqual([]);
    const { outcome, socket } = await connectPeer(healthyClientTimeoutMs);
    expect(outcome).toBe("ok");
    expect(await exchange(socket, "healed", healthyClientTimeoutMs)).toBe("ok");
    socket.destroy();
  });

  it("a silent partition makes a connect hang until the client's own timeout", async () => {
    const fault = track(await partition(host, { response: "drop" }));
    expect((await connectPeer(faultedClientTimeoutMs)).outcome).toBe("timeout");
    expect((await fault.matched()).packets).toBeGreaterThanOrEqual(1);   // the SYN, dropped
    await fault.heal();
  });

  it("a silent partition leaves a request unanswered; the answer comes after heal", async () => {
    const { socket } = await connectPeer(healthyClientTimeoutMs);
    const fault = track(await partition(host, { response: "drop" }));
    expect(await exchange(socket, "lost?", faultedClientTimeoutMs)).toBe("timeout");
    // TCP retransmits the request once the path is back: the same connection answers. Listened
    // for before the heal: the answer can arrive while heal() waits for its nft command, and a
    // flowing socket with no 'data' listener drops it (CI once waited 600 s for it).
    const answered = once(socket, "data");
    await fault.heal();
    const [answer] = (await answered) as [Buffer];
    expect(answer.toString()).toBe("lost?");
    socket.destroy();
  });

  it("a reset partition refuses connects both ways and resets an open connection", async () => {
    const listener = createServer((socket) => socket.destroy());
    listener.listen(0, host.rootAddress);
    await once(listener, "listening");
    const { socket } = await connectPeer(healthyClientTimeoutMs);
    const fault = track(await partition(host, { response: "reset" }));
    // The long timeouts are the point: a reset is an answer, not a wait.
    expect((await connectPeer(healthyClientTimeoutMs)).outcome).toBe("ECONNREFUSED");
    expect(await exchange(socket, "reset?", healthyClientTimeoutMs)).toBe("ECONNRESET");
    // The host's own connect is reset in its namespace (outbound), before it leaves.
    const rootListener = { host: host.rootAddress, port: (listener.address() as AddressInfo).port };
    expect(await peer.connectFromHost(rootListener, "during")).toBe("ECONNREFUSED");
    await fault.heal();
    expect(await peer.connectFromHost(rootListener, "after heal")).toBe("ok");
    listener.close();
  });

  it("an inbound partition drops what the root sends; what the host sends arrives", async () => {
    const udp = await rootUdp(host);
    const toPeer = { host: host.address, port: peer.udpPort };
    const fault = track(await partition(host, { direction: "inbound" }));
    await sendUdp(udp.socket, "to host, dropped", toPeer);
    await droppedAtLeast(fault, 1);
    await peer.sendUdp({ host: host.rootAddress, port: udp.port }, "to root, arrives");
    await udp.received("to root, arrives");
    expect((await connectPeer(faultedClientTimeoutMs)).outcome).toBe("timeout");
    await fault.heal();
    await sendUdp(udp.socket, "to host, after heal", toPeer);
    expect(await peer.receivedUdp("to host, after heal")).not.toContain("to host, dropped");
    udp.socket.close();
  });

  it("an outbound partition drops what the host sends; what the root sends arrives", async () => {
    const udp = await rootUdp(host);
    const toRoot = { host: host.rootAddress, port: udp.port };
    const fault = track(await partition(host, { direction: "outbound" }));
    await sendUdp(udp.socket, "to host, arrives", { host: host.address, port: peer.udpPort });
    await peer.receivedUdp("to host, arrives");
    await peer.sendUdp(toRoot, "to root, dropped");       // silently: no error for the sender
    await droppedAtLeast(fault, 1);
    // The SYN arrives, the SYN-ACK does not: the root side waits, as in any partition.
    expect((await connectPeer(faultedClientTimeoutMs)).outcome).toBe("timeout");
    await fault.heal();
    await peer.sendUdp(toRoot, "to root, after heal");
    await udp.received("to root, after heal");
    expect(udp.texts).not.toContain("to root, dropped");
    udp.socket.close();
  });

  it("random loss makes exchanges retransmit or time out, and nothing else", async () => {
    const { lossExchanges, lossConnections, lossPercent } = netTestBounds;
    const sockets = await Promise.all(Array.from({ length: lossConnections }, async () => {
      const { outcome, socket } = await connectPeer(healthyClientTimeoutMs);
      expect(outcome).toBe("ok");
      return socket;
    }));
    const retransmittedBefore = await retransmittedBy(host);
    const fault = track(await loss(host, { percent: lossPercent }));
    const startedAt = performance.now();
    // Each exchange waits the client's own (short) timeout; a client that times out gives its
    // connection up, as a client with a read timeout does.
    const outcomes = (await Promise.all(sockets.map(async (socket, c) => {
      const results: Outcome[] = [];
      for (let i = 0; i < lossExchanges / lossConnections && results.at(-1) !== "timeout"; i++) {
        results.push(await exchange(socket, `c${c} x${i};`, faultedClientTimeoutMs));
      }
      socket.destroy();
      return results;
    }))).flat();
    const elapsedMs = performance.now() - startedAt;
    const { packets } = await fault.matched();
    await fault.heal();
    const retransmissions = (await retransmittedBy(host)) - retransmittedBefore;
    const answered = outcomes.filter((o) => o === "ok").length;
    const timedOut = outcomes.filter((o) => o === "timeout").length;
    console.log(`[loss ${lossPercent}%] ${outcomes.length} exchanges over ${lossConnections} ` +
      `connections in ${elapsedMs.toFixed(0)} ms: ${answered} answered, ${timedOut} timed out ` +
      `(connection given up); ${packets} packets dropped, ${retransmissions} segments ` +
      "retransmitted by the host");
    expect(packets).toBeGreaterThan(0);
    expect(retransmissions + timedOut).toBeGreaterThan(0);
    expect(answered).toBeGreaterThan(0);
    // No reset, no wrong answer: loss only delays or loses.
    expect(answered + timedOut).toBe(outcomes.length);
  });

  it("a narrow link bounds a large transfer's throughput", async () => {
    const rate = netTestBounds.narrowLinkRateBitsPerSecond;
    const burst = netTestBounds.narrowLinkBurstBytes;
    const size = netTestBounds.narrowLinkTransferBytes;
    const fault = track(await narrowLink(host, { rateBitsPerSecond: rate, burstBytes: burst }));
    const startedAt = performance.now();
    const received = await download(host, peer, size);
    const elapsedSeconds = (performance.now() - startedAt) / 1_000;
    const shaped = await fault.shaped();
    await fault.heal();
    const throughput = (received * 8) / elapsedSeconds / 1e6;
    console.log(`[narrow link ${rate / 1e6} Mbit/s] ${received} bytes in ` +
      `${elapsedSeconds.toFixed(2)} s: ${throughput.toFixed(2)} Mbit/s; tbf held back ` +
      `${shaped.overlimits} packets, dropped ${shaped.drops}`);
    expect(received).toBe(size);
    expect(shaped.overlimits).toBeGreaterThan(0);
    // A token bucket lets through at most its burst plus rate x time (payload is less than what
    // tbf counts, headers included). A loaded machine only makes the transfer slower, so this
    // cannot fail for want of CPU; it fails if nothing shaped it. The slack covers tc's rounding.
    expect(received).toBeLessThanOrEqual(burst + 1_514 + (rate / 8) * elapsedSeconds * 1.01);
  });
});
