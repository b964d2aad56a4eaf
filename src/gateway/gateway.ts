import { readFileSync } from "node:fs";
import type { CardAuthorizer, CardChannel } from "../cards/index.ts";
import type { Config } from "../config/config.ts";
import { limits } from "../config/limits.ts";
import type { Logger } from "../observability/logger.ts";
import { dictionaryByName, isFraming, type Framing } from "../protocols/iso8583/index.ts";
import type { Codec } from "./framed-socket.ts";
import { startInboundEndpoint, type InboundEndpoint } from "./inbound-endpoint.ts";
import { OutboundConnection } from "./outbound-connection.ts";

/**
 * The card channel as `clearline serve` runs it: the scheme endpoint when a port is configured,
 * the outbound scheme connection when one is configured, and the authorizer behind
 * POST /v1/card-authorizations (which answers iso8583_scheme_unavailable without a connection).
 * What each message comes to is the card-messages service's (src/cards/), handed in as `cards`.
 */
export interface CardGateway {
  authorizer: CardAuthorizer;
  iso8583Port: number | undefined;
  /** The outbound scheme link: undefined when none is configured, else signed on or why not. */
  schemeLinkHealth(): { ok: boolean; reason?: string } | undefined;
  /**
   * The outbound scheme link, not started: the composition root runs it while this process holds
   * its lease (one connection to the scheme per fleet). Its name is the connection's (host:port).
   */
  schemeLink: { name: string; start(): void; stop(): Promise<void> } | undefined;
  stop(): Promise<void>;
}

export function codecOf(dictionaryName: string, framing: string): Codec {
  const dictionary = dictionaryByName(dictionaryName);
  if (dictionary === undefined || !isFraming(framing)) throw new Error(`dictionary ${dictionaryName} and framing ${framing} are validated by loadConfig`);
  return { dictionary, framing: framing satisfies Framing, frameBytesMax: limits.iso8583.frameBytesMax };
}

function readTlsFiles(files: NonNullable<Config["iso8583Admission"]["tls"]>): { cert: Buffer; key: Buffer; clientCa: Buffer } {
  return { cert: readFileSync(files.certPath), key: readFileSync(files.keyPath), clientCa: readFileSync(files.clientCaPath) };
}

export async function startCardGateway(
  config: Config, cards: CardChannel, logger: Logger,
): Promise<CardGateway> {
  const bounds = limits.iso8583;
  let endpoint: InboundEndpoint | undefined;
  if (config.iso8583Port !== undefined) {
    endpoint = await startInboundEndpoint({ issuer: cards.issuer(), logger }, {
      host: config.iso8583Host, port: config.iso8583Port, codec: codecOf(config.iso8583Dictionary, config.iso8583Framing),
      connectionsMax: bounds.inboundConnectionsMax, inflightPerConnectionMax: bounds.inboundInflightPerConnectionMax, idleTimeoutMs: bounds.inboundIdleTimeoutMs,
      connectionsPerPeerMax: bounds.inboundConnectionsPerPeerMax, frameStartedTimeoutMs: bounds.inboundFrameStartedTimeoutMs,
      allowedPeers: config.iso8583Admission.allowedPeers, requireSignOn: config.iso8583Admission.requireSignOn,
      ...(config.iso8583Admission.tls ? { tls: readTlsFiles(config.iso8583Admission.tls) } : {}),
    });
  }
  let outbound: OutboundConnection | undefined;
  const target = config.iso8583Outbound;
  if (target !== undefined) {
    outbound = new OutboundConnection(cards.linkStore, logger, {
      name: `${target.host}:${target.port}`, host: target.host, port: target.port, codec: codecOf(target.dictionary, target.framing),
      acquirerId: target.acquirerId, responseTimeoutMs: target.responseTimeoutMs, inflightMax: bounds.outboundInflightMax, slotWaitMs: bounds.outboundSlotWaitMs,
      echoIdleMs: bounds.outboundEchoIdleMs, reconnectBackoffMs: bounds.outboundReconnectBackoffMs, reconnectBackoffMaxMs: bounds.outboundReconnectBackoffMaxMs,
      reversalRetryBackoffMs: bounds.reversalRetryBackoffMs, reversalRetryBackoffMaxMs: bounds.reversalRetryBackoffMaxMs,
      reversalJobIntervalMs: bounds.reversalJobIntervalMs, reversalBatchRowsMax: bounds.reversalBatchRowsMax, stanBlockSize: bounds.stanBlockSize,
    });
  }
  const authorizer = cards.authorizer(outbound, logger);
  const link = outbound;
  return {
    schemeLink: link === undefined ? undefined
      : { name: link.options.name, start: () => link.start(), stop: () => link.stop() },
    authorizer,
    iso8583Port: endpoint?.port,
    schemeLinkHealth() {
      if (outbound === undefined) return undefined;
      if (outbound.isSignedOn) return { ok: true };
      return { ok: false, reason: `the scheme link to ${outbound.options.name} is not signed on (connecting, or the scheme refused or dropped it)` };
    },
    async stop() {
      await endpoint?.close();
      await outbound?.stop();
    },
  };
}
