import { createServer as createTcpServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { createServer as createTlsServer } from "node:tls";
import type { CardIssuer } from "../cards/index.ts";
import { limits } from "../config/limits.ts";
import type { Logger } from "../observability/logger.ts";
import { repeatedFailureLog } from "../observability/repeated-failure-log.ts";
import { iso8583InboundClosedConnections, iso8583InboundConnections, iso8583InboundRefusedConnections } from "../observability/metrics-gateway.ts";
import { Admission } from "./admission.ts";
import type { Codec } from "./framed-socket.ts";
import { runInboundSession } from "./inbound-session.ts";

/**
 * The scheme endpoint (issuer side): the scheme connects here and sends authorizations,
 * financial requests, advices, reversals and network management. Admission first: a peer
 * outside the allowed networks or past its own connection bound is refused at once (and counted
 * by reason), so a flood from one peer never takes the slots of another; a connection must sign
 * on within a short deadline, and while it has not it may be evicted by a newer one when the
 * budget of such connections or the total is full (docs/decisions/0064). With
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
  unsignedConnectionsMax?: number;        // default limits.iso8583.inboundUnsignedConnectionsMax
  signOnTimeoutMs?: number;               // default limits.iso8583.inboundSignOnTimeoutMs
  requireSignOn?: boolean;                // default true
  tls?: { cert: Buffer; key: Buffer; clientCa: Buffer; handshakeTimeoutMs?: number };
}

function withDefaults(options: InboundEndpointOptions): Required<Omit<InboundEndpointOptions, "tls">> & Pick<InboundEndpointOptions, "tls"> {
  return {
    ...options,
    connectionsPerPeerMax: options.connectionsPerPeerMax ?? limits.iso8583.inboundConnectionsPerPeerMax,
    allowedPeers: options.allowedPeers ?? ["127.0.0.0/8", "::1/128"],
    frameStartedTimeoutMs: options.frameStartedTimeoutMs ?? limits.iso8583.inboundFrameStartedTimeoutMs,
    unsignedConnectionsMax: options.unsignedConnectionsMax ?? limits.iso8583.inboundUnsignedConnectionsMax,
    signOnTimeoutMs: options.signOnTimeoutMs ?? limits.iso8583.inboundSignOnTimeoutMs,
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
  const unavailable = repeatedFailureLog(logger,
    "card messages answered 96: the database does not answer");
  const admission = new Admission({
    allowedPeers: options.allowedPeers, connectionsMax: options.connectionsMax,
    connectionsPerPeerMax: options.connectionsPerPeerMax, unsignedConnectionsMax: options.unsignedConnectionsMax,
  });
  const sockets = new Set<Socket>();
  const running = new Set<Promise<void>>();
  // The admitted connection of each socket, by peer address and port (a TLS session's socket is
  // not the TCP socket admission saw, but has its address and port).
  const links = new Map<string, SessionLink>();
  let connectionCount = 0;

  const server: Server = options.tls
    ? createTlsServer({ cert: options.tls.cert, key: options.tls.key, ca: options.tls.clientCa, requestCert: true, rejectUnauthorized: true, handshakeTimeout: options.tls.handshakeTimeoutMs ?? limits.iso8583.inboundTlsHandshakeTimeoutMs })
    : createTcpServer();

  // Admission on the raw TCP connection, before any TLS handshake or byte of ISO 8583 is read.
  server.on("connection", (raw: Socket) => {
    const link = admitLink(admission, raw, options.signOnTimeoutMs, logger);
    if (link === undefined) return;
    const linkKey = peerKey(raw);
    links.set(linkKey, link);
    sockets.add(raw);
    iso8583InboundConnections.set(sockets.size);
    raw.on("error", (error) => logger.info({ peer: raw.remoteAddress, err: error.message }, "scheme connection error"));
    raw.once("close", () => {
      link.release();
      links.delete(linkKey);
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
    const link = links.get(peerKey(socket));
    const sessionOptions = { ...options, ...(link ? { link } : {}) };
    runInboundSession({ issuer: deps.issuer, logger, unavailable }, socket, connection, sessionOptions, running);
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
      unavailable.close();
    },
  };
}

function peerKey(socket: Socket): string {
  return `${socket.remoteAddress ?? "?"}|${socket.remotePort ?? 0}`;
}

/** What a session tells admission about its connection, and the connection's sign-on deadline. */
interface SessionLink {
  signedOn(value: boolean): void;
  active(): void;
  release(): void;
}

/**
 * Admits a raw connection or refuses it (counted, closed before a byte is read). An admitted
 * connection must sign on within `signOnTimeoutMs` (again after a sign-off), else it is closed;
 * it may be evicted by a later connection while it has not signed on (docs/decisions/0064).
 */
function admitLink(admission: Admission, raw: Socket, signOnTimeoutMs: number, logger: Logger): SessionLink | undefined {
  const peer = raw.remoteAddress;
  const admitted = admission.admit(peer ?? "", (reason) => {
    iso8583InboundClosedConnections.inc({ reason });
    logger.info({ peer, reason }, "scheme connection evicted to admit a newer one");
    raw.destroy();
  });
  if (!admitted.ok) {
    iso8583InboundRefusedConnections.inc({ reason: admitted.reason });
    logger.warn({ peer, reason: admitted.reason }, "scheme connection refused");
    raw.destroy();
    return undefined;
  }
  let deadline: NodeJS.Timeout | undefined;
  const awaitSignOn = () => {
    deadline = setTimeout(() => {
      iso8583InboundClosedConnections.inc({ reason: "sign_on_deadline" });
      logger.info({ peer, deadlineMs: signOnTimeoutMs }, "scheme connection did not sign on in time; closing");
      raw.destroy();
    }, signOnTimeoutMs);
  };
  awaitSignOn();
  raw.once("close", () => clearTimeout(deadline));
  return {
    signedOn(value) {
      clearTimeout(deadline);
      if (!value && !raw.destroyed) awaitSignOn();
      admitted.connection.signedOn(value);
    },
    active: () => admitted.connection.active(),
    release: () => admitted.connection.release(),
  };
}
