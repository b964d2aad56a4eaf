import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect as connectTls } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CardKeys } from "../../src/cards/card-key.ts";
import { limits } from "../../src/config/limits.ts";
import { Admission } from "../../src/gateway/admission.ts";
import { startInboundEndpoint, type InboundEndpoint, type InboundEndpointOptions } from "../../src/gateway/inbound-endpoint.ts";
import { cardRequest, networkRequest, SchemeClient } from "../support/scheme-simulator.ts";
import { iso8583InboundClosedConnections, iso8583InboundRefusedConnections } from "../../src/observability/metrics-gateway.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { balance, capturedLogger, codec, connectClient, givenIssuer, patient, testKeys, testPan, type Issuer } from "./support.ts";
import { cardIssuer } from "../../src/cards/index.ts";

async function counted(counter: typeof iso8583InboundRefusedConnections, reason: string): Promise<number> {
  return (await counter.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

/** A raw TCP connection from a given loopback address (Linux routes all of 127/8 to lo). */
function rawConnection(port: number, localAddress: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, localAddress });
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });
}

const closedEvent = (socket: Socket) => new Promise<void>((resolve) => {
  if (socket.destroyed) resolve();
  else socket.once("close", () => resolve());
});

describe("admission on the ISO 8583 scheme endpoint", () => {
  let db: TestDatabase;
  let keys: CardKeys;
  let issuer: Issuer;
  const pan = testPan("476175", 1);
  let stan = 5_000;
  const endpoints: InboundEndpoint[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
    keys = testKeys();
    issuer = await givenIssuer(db.pool, keys, { name: "admission-issuer", pans: [pan], balanceMinor: 1_000_000n });
  });
  afterAll(async () => {
    for (const endpoint of endpoints) await endpoint.close();
    await db.drop();
  });

  async function endpointWith(overrides: Partial<InboundEndpointOptions> = {}): Promise<InboundEndpoint> {
    const endpoint = await startInboundEndpoint({ issuer: cardIssuer({ pool: db.pool, keys }), logger: capturedLogger("warn").logger }, {
      host: "127.0.0.1", port: 0, codec,
      connectionsMax: limits.iso8583.inboundConnectionsMax, inflightPerConnectionMax: limits.iso8583.inboundInflightPerConnectionMax,
      idleTimeoutMs: limits.iso8583.inboundIdleTimeoutMs, ...overrides,
    });
    endpoints.push(endpoint);
    return endpoint;
  }

  it("keeps authorizing for one peer while another floods it with more idle and half-sent connections than the endpoint holds", async () => {
    const endpoint = await endpointWith();
    const perPeer = limits.iso8583.inboundConnectionsPerPeerMax;
    const refusedBefore = await counted(iso8583InboundRefusedConnections, "peer_connections_max");
    // The flooding peer (127.0.0.2): half its connections idle, half announce an 8,000-byte frame and stall.
    const flood: Socket[] = [];
    // More connections than the whole endpoint holds: without a per-peer bound they would take every slot.
    const attempts = limits.iso8583.inboundConnectionsMax + 4;
    for (let i = 0; i < attempts; i++) {
      const socket = await rawConnection(endpoint.port, "127.0.0.2");
      socket.on("error", () => undefined);
      if (i % 2 === 1) socket.write(Buffer.from([0x1f, 0x40, 0x30, 0x31]));   // binary-2 header 8000, then 2 bytes
      flood.push(socket);
    }
    // The connections past its bound are refused at once; the ones within it are held.
    await Promise.all(flood.slice(perPeer).map(closedEvent));
    expect(await counted(iso8583InboundRefusedConnections, "peer_connections_max")).toBe(refusedBefore + attempts - perPeer);
    expect(flood.slice(0, perPeer).every((s) => !s.destroyed)).toBe(true);

    // The scheme (127.0.0.1) still gets in, signs on and is approved.
    const before = await balance(db.pool, issuer.tenantId, issuer.accountId);
    const scheme = await connectClient(endpoint, { localAddress: "127.0.0.1" });
    const response = await scheme.request(cardRequest({ pan, amountMinor: 700n, stan: ++stan }));
    expect(response.fields[39]).toBe("00");
    expect(await balance(db.pool, issuer.tenantId, issuer.accountId)).toBe(before - 700n);
    await scheme.close();
    for (const socket of flood) socket.destroy();
  });

  /** Opens `perAddress` idle connections (never a byte) from each of `addresses`, one after another. */
  async function idleFlood(port: number, addresses: readonly string[], perAddress: number): Promise<Socket[]> {
    const sockets: Socket[] = [];
    for (const address of addresses) {
      for (let i = 0; i < perAddress; i++) {
        const socket = await rawConnection(port, address);
        socket.on("error", () => undefined);
        sockets.push(socket);
      }
    }
    return sockets;
  }

  /** Signs a new link on from `localAddress`: "00", or "closed" when the endpoint closed it instead. */
  async function signOnFrom(port: number, localAddress: string): Promise<{ answer: string; client: SchemeClient }> {
    const client = patient(await SchemeClient.connect("127.0.0.1", port, codec, { localAddress }));
    const answer = await Promise.race([
      client.request(networkRequest("001", ++stan)).then((response) => String(response.fields[39])),
      client.closed.then(() => "closed"),
    ]);
    return { answer, client };
  }

  const addresses = (from: number, count: number) => Array.from({ length: count }, (_, i) => `127.0.0.${from + i}`);

  it("answers a sign-on from another address while idle sockets from 4 addresses fill every slot (regression: the endpoint was starved)", async () => {
    const endpoint = await endpointWith();
    const perPeer = limits.iso8583.inboundConnectionsPerPeerMax;
    const peers = limits.iso8583.inboundConnectionsMax / perPeer;
    expect(peers).toBe(4);
    const flood = await idleFlood(endpoint.port, addresses(2, peers), perPeer);
    const { answer, client } = await signOnFrom(endpoint.port, "127.0.0.1");
    expect(answer).toBe("00");
    // The link that signed on is a scheme link: it authorizes.
    expect((await client.request(cardRequest({ pan, amountMinor: 10n, stan: ++stan }))).fields[39]).toBe("00");
    await client.close();
    for (const socket of flood) socket.destroy();
  });

  it("answers a sign-on from another address after 500 idle connections from 50 addresses", async () => {
    const endpoint = await endpointWith();
    const evictedBefore = await counted(iso8583InboundClosedConnections, "evicted_unsigned");
    const flood = await idleFlood(endpoint.port, addresses(2, 50), 10);
    expect(flood).toHaveLength(500);
    const { answer, client } = await signOnFrom(endpoint.port, "127.0.0.1");
    expect(answer).toBe("00");
    expect(await counted(iso8583InboundClosedConnections, "evicted_unsigned")).toBeGreaterThan(evictedBefore);
    await client.close();
    for (const socket of flood) socket.destroy();
  });

  it("evicts the oldest connection that has not signed on before any signed-on link, however long that link was quiet", () => {
    const admission = new Admission({ allowedPeers: ["127.0.0.0/8"], connectionsMax: 4, connectionsPerPeerMax: 3, unsignedConnectionsMax: 2 });
    const evicted: string[] = [];
    const admit = (name: string, address: string) => {
      const admitted = admission.admit(address, (reason) => evicted.push(`${name}:${reason}`));
      if (!admitted.ok) throw new Error(admitted.reason);
      return admitted.connection;
    };
    const link = admit("link", "127.0.0.1");
    link.signedOn(true);                         // the quietest connection from here on
    const second = admit("second", "127.0.0.1");
    second.signedOn(true);
    second.active();
    admit("idle-1", "127.0.0.2");
    admit("idle-2", "127.0.0.3");
    expect(evicted).toEqual([]);
    admit("newer", "127.0.0.4");                 // the unsigned budget (2) is full: idle-1 goes
    expect(evicted).toEqual(["idle-1:evicted_unsigned"]);
    expect(admission.counts()).toEqual({ held: 4, unsigned: 2 });
    for (const [name, address] of [["a", "127.0.0.5"], ["b", "127.0.0.6"]] as const) admit(name, address).signedOn(true);
    // Every held connection signed on and the total (4) is full: the one quiet the longest goes.
    expect(evicted).toEqual(["idle-1:evicted_unsigned", "idle-2:evicted_unsigned", "newer:evicted_unsigned"]);
    admit("c", "127.0.0.7");
    expect(evicted.at(-1)).toBe("link:evicted_idle");
    expect(admission.admit("127.0.0.1", () => undefined)).toMatchObject({ ok: true });
  });

  for (const requireSignOn of [true, false]) {
    it(`closes a connection that has not signed on by its deadline, counting it, and keeps one that has${requireSignOn ? "" : " (sign-on not required: any decided message)"}`, async () => {
      const endpoint = await endpointWith({ signOnTimeoutMs: 200, requireSignOn });
      const before = await counted(iso8583InboundClosedConnections, "sign_on_deadline");
      const scheme = patient(await SchemeClient.connect("127.0.0.1", endpoint.port, codec));
      const first = requireSignOn ? networkRequest("001", ++stan) : cardRequest({ pan, amountMinor: 5n, stan: ++stan });
      expect((await scheme.request(first)).fields[39]).toBe("00");
      // Connected after the scheme signed on, so its deadline ends after the scheme's would have.
      const silent = await rawConnection(endpoint.port, "127.0.0.2");
      silent.on("error", () => undefined);
      await closedEvent(silent);
      expect(await counted(iso8583InboundClosedConnections, "sign_on_deadline")).toBe(before + 1);
      expect((await scheme.request(networkRequest("301", ++stan))).fields[39]).toBe("00");
      await scheme.close();
    });
  }

  it("closes a connection whose started frame stalls past the frame deadline, counting it", async () => {
    const endpoint = await endpointWith({ frameStartedTimeoutMs: 200 });
    const before = await counted(iso8583InboundClosedConnections, "frame_deadline");
    const socket = await rawConnection(endpoint.port, "127.0.0.1");
    socket.on("error", () => undefined);
    socket.write(Buffer.from([0x00, 0x40, 0x30]));   // a 64-byte frame, one byte of it
    await closedEvent(socket);
    expect(await counted(iso8583InboundClosedConnections, "frame_deadline")).toBe(before + 1);
  });

  it("refuses a peer outside the allowed networks before reading a byte, counting it", async () => {
    const endpoint = await endpointWith({ allowedPeers: ["127.0.0.1/32"] });
    const before = await counted(iso8583InboundRefusedConnections, "peer_not_allowed");
    const stranger = await rawConnection(endpoint.port, "127.0.0.3");
    stranger.on("error", () => undefined);
    await closedEvent(stranger);
    expect(await counted(iso8583InboundRefusedConnections, "peer_not_allowed")).toBe(before + 1);
    const allowed = await connectClient(endpoint, { localAddress: "127.0.0.1" });
    expect((await allowed.request(networkRequest("301", ++stan))).fields[39]).toBe("00");
    await allowed.close();
  });

  it("answers 91 with no effect to an authorization before sign-on, and approves it after", async () => {
    const endpoint = await endpointWith();
    const client = patient(await SchemeClient.connect("127.0.0.1", endpoint.port, codec));
    const before = await balance(db.pool, issuer.tenantId, issuer.accountId);
    const early = await client.request(cardRequest({ pan, amountMinor: 300n, stan: ++stan }));
    expect(early.mti).toBe("0110");
    expect(early.fields[39]).toBe("91");
    expect(await balance(db.pool, issuer.tenantId, issuer.accountId)).toBe(before);
    expect((await client.request(networkRequest("001", ++stan))).fields[39]).toBe("00");
    expect((await client.request(cardRequest({ pan, amountMinor: 300n, stan: ++stan }))).fields[39]).toBe("00");
    expect(await balance(db.pool, issuer.tenantId, issuer.accountId)).toBe(before - 300n);
    await client.close();
  });

  it("decides financial messages without sign-on when sign-on is not required", async () => {
    const endpoint = await endpointWith({ requireSignOn: false });
    const client = patient(await SchemeClient.connect("127.0.0.1", endpoint.port, codec));
    expect((await client.request(cardRequest({ pan, amountMinor: 100n, stan: ++stan }))).fields[39]).toBe("00");
    await client.close();
  });

  it("closes the connection on an empty frame and on a frame without a readable MTI, counting each", async () => {
    const endpoint = await endpointWith();
    for (const body of [Buffer.alloc(0), Buffer.from("AB")]) {
      const before = await counted(iso8583InboundClosedConnections, "mti_unreadable");
      const socket = await rawConnection(endpoint.port, "127.0.0.1");
      socket.on("error", () => undefined);
      const header = Buffer.alloc(2);
      header.writeUInt16BE(body.length);
      socket.write(Buffer.concat([header, body]));
      await closedEvent(socket);
      expect(await counted(iso8583InboundClosedConnections, "mti_unreadable")).toBe(before + 1);
    }
  });

  describe("over TLS with client certificates", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "clearline-tls-"));
    const file = (name: string) => path.join(dir, name);
    const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
    beforeAll(() => {
      openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=test scheme CA");
      for (const name of ["server", "client"]) {
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name === "server" ? "127.0.0.1" : "scheme"}`);
        openssl("x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", `${name}.crt`, "-days", "2");
      }
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const tlsClient = (port: number, withCertificate: boolean): Promise<Socket> => new Promise((resolve, reject) => {
      const socket = connectTls({
        host: "127.0.0.1", port, ca: readFileSync(file("ca.crt")), checkServerIdentity: () => undefined,
        ...(withCertificate ? { cert: readFileSync(file("client.crt")), key: readFileSync(file("client.key")) } : {}),
      });
      socket.once("secureConnect", () => resolve(socket));
      socket.once("error", reject);
    });

    it("signs on and authorizes with a client certificate signed by the configured CA", async () => {
      const endpoint = await endpointWith({ tls: { cert: readFileSync(file("server.crt")), key: readFileSync(file("server.key")), clientCa: readFileSync(file("ca.crt")) } });
      const client = SchemeClient.over(await tlsClient(endpoint.port, true), codec);
      expect((await client.request(networkRequest("001", ++stan))).fields[39]).toBe("00");
      expect((await client.request(cardRequest({ pan, amountMinor: 50n, stan: ++stan }))).fields[39]).toBe("00");
      await client.close();
    });

    it("refuses a client without a certificate, counting the refused handshake", async () => {
      const endpoint = await endpointWith({ tls: { cert: readFileSync(file("server.crt")), key: readFileSync(file("server.key")), clientCa: readFileSync(file("ca.crt")) } });
      const before = await counted(iso8583InboundRefusedConnections, "tls_handshake");
      const outcome = await tlsClient(endpoint.port, false).then(
        (socket) => new Promise<string>((resolve) => {
          socket.on("error", () => resolve("closed"));
          socket.on("close", () => resolve("closed"));
          socket.write(Buffer.from([0x00, 0x04, 0x30, 0x38, 0x30, 0x30]));
        }),
        () => "closed",
      );
      expect(outcome).toBe("closed");
      while ((await counted(iso8583InboundRefusedConnections, "tls_handshake")) === before) await new Promise((resolve) => setImmediate(resolve));
      expect(await counted(iso8583InboundRefusedConnections, "tls_handshake")).toBe(before + 1);
    });
  });
});
