import { createServer as createTcpServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { createServer as createTlsServer } from "node:tls";
import type { CardIssuer } from "../cards/index.ts";
import { limits } from "../config/limits.ts";
import type { Logger } from "../observability/logger.ts";
import { iso8583InboundConnections, iso8583InboundRefusedConnections } from "../observability/metrics-gateway.ts";
import { Admission } from "./admission.ts";
import type { Codec } from "./framed-socket.ts";
import { runInboundSession } from "./inbound-session.ts";

/**
 * The scheme endpoint (issuer side): the scheme connects here and sends authorizations,
 * financial requests, advices, reversals and network management. Admission first: a peer
 * outside the allowed networks, past its own connection bound or past the total is refused at
 * once (and counted by reason), so a flood from one peer never takes the slots of another. With
 * TLS, a client certificate signed by the configured CA is required. Then bounded in in-flight
 * messages per connection, frame size, the time a started frame may take, and idle time. What
 * each message is answered is the issuer side's (src/cards/), but for network management.
 */
export interface InboundEndpointOptions {
  host: string;
  port: number;
  codec: Codec;
  connectionsMax: number;
  inflightPerConnectionMax: number;
  idleTimeoutMs: number;
  connectionsPerPeerMax?: number;         // default limits.iso8583.inboundConnectionsPerPeerMax
  allowedPeers?: readonly string[];       // default loopback only
  frameStartedTimeoutMs?: number;         // default limits.iso8583.inboundFrameStartedTimeoutMs
  requireSignOn?: boolean;                // default true
  tls?: { cert: Buffer; key: Buffer; clientCa: Buffer; handshakeTimeoutMs?: number };
}

function withDefaults(options: InboundEndpointOptions): Required<Omit<InboundEndpointOptions, "tls">> & Pick<InboundEndpointOptions, "tls"> {
  return {
    ...options,
    connectionsPerPeerMax: options.connectionsPerPeerMax ?? limits.iso8583.inboundConnectionsPerPeerMax,
    allowedPeers: options.allowedPeers ?? ["127.0.0.0/8", "::1/128"],
    frameStartedTimeoutMs: options.frameStartedTimeoutMs ?? limits.iso8583.inboundFrameStartedTimeoutMs,
    requireSignOn: options.requireSignOn ?? true,
  };
}

export interface InboundEndpoint {
  port: number;
  close(): Promise<void>;
}

export async function startInboundEndpoint(
  deps: { issuer: CardIssuer; logger: Logger }, given: InboundEndpointOptions,
): Promise<InboundEndpoint> {
  const options = withDefaults(given);
  const logger = deps.logger.child({ component: "iso8583-inbound" });
  const admission = new Admission({ allowedPeers: options.allowedPeers, connectionsMax: options.connectionsMax, connectionsPerPeerMax: options.connectionsPerPeerMax });
  const sockets = new Set<Socket>();
  const running = new Set<Promise<void>>();
  let connectionCount = 0;

  const server: Server = options.tls
    ? createTlsServer({ cert: options.tls.cert, key: options.tls.key, ca: options.tls.clientCa, requestCert: true, rejectUnauthorized: true, handshakeTimeout: options.tls.handshakeTimeoutMs ?? limits.iso8583.inboundTlsHandshakeTimeoutMs })
    : createTcpServer();

  // Admission on the raw TCP connection, before any TLS handshake or byte of ISO 8583 is read.
  server.on("connection", (raw: Socket) => {
    const admitted = admission.admit(raw.remoteAddress ?? "");
    if (!admitted.ok) {
      iso8583InboundRefusedConnections.inc({ reason: admitted.reason });
      logger.warn({ peer: raw.remoteAddress, reason: admitted.reason }, "scheme connection refused");
      raw.destroy();
      return;
    }
    sockets.add(raw);
    iso8583InboundConnections.set(sockets.size);
    raw.on("error", (error) => logger.info({ peer: raw.remoteAddress, err: error.message }, "scheme connection error"));
    raw.once("close", () => {
      admitted.release();
      sockets.delete(raw);
      iso8583InboundConnections.set(sockets.size);
    });
  });
  server.on("tlsClientError", (error: Error, socket: Socket) => {
    iso8583InboundRefusedConnections.inc({ reason: "tls_handshake" });
    logger.warn({ peer: socket.remoteAddress, err: error.message }, "scheme TLS handshake refused");
    socket.destroy();
  });
  const onSession = (socket: Socket) => {
    if (socket.destroyed) return;
    const connection = `inbound:${socket.remoteAddress ?? "?"}:${socket.remotePort ?? 0}#${++connectionCount}`;
    runInboundSession({ issuer: deps.issuer, logger }, socket, connection, options, running);
  };
  if (options.tls) server.on("secureConnection", onSession);
  else server.on("connection", onSession);

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  logger.info({ port, dictionary: options.codec.dictionary.name, framing: options.codec.framing, tls: options.tls !== undefined, allowedPeers: options.allowedPeers }, "ISO 8583 endpoint listening");

  return {
    port,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.pause();
      await Promise.allSettled([...running]);
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
