import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import type { Logger } from "../observability/logger.ts";
import { performance } from "node:perf_hooks";
import { iso8583InboundConnections, iso8583InboundMessages, iso8583InboundRejected, iso8583MessageDuration, messageClassOf } from "../observability/metrics-gateway.ts";
import { maskMessage, type Message } from "../protocols/iso8583/index.ts";
import { FramedSocket, type Codec } from "./framed-socket.ts";
import { handleInbound, type InboundDependencies } from "./inbound.ts";
import { buildResponse, expectsResponse, textField } from "./messages.ts";

/**
 * The scheme endpoint (issuer side): the scheme connects here and sends authorizations,
 * financial requests, advices, reversals and network management. Bounded in connections,
 * in-flight messages per connection, frame size and idle time. A message that cannot be read is
 * answered with a format error when its MTI can be read, and logged masked; the connection lives on.
 */
export interface InboundEndpointOptions {
  host: string;
  port: number;
  codec: Codec;
  connectionsMax: number;
  inflightPerConnectionMax: number;
  idleTimeoutMs: number;
}

export interface InboundEndpoint {
  port: number;
  close(): Promise<void>;
}

export async function startInboundEndpoint(deps: InboundDependencies & { logger: Logger }, options: InboundEndpointOptions): Promise<InboundEndpoint> {
  const logger = deps.logger.child({ component: "iso8583-inbound" });
  const sockets = new Set<Socket>();
  const running = new Set<Promise<void>>();
  let connectionCount = 0;

  const server: Server = createServer((socket) => {
    const connection = `inbound:${socket.remoteAddress ?? "?"}:${socket.remotePort ?? 0}#${++connectionCount}`;
    sockets.add(socket);
    iso8583InboundConnections.set(sockets.size);
    socket.setNoDelay(true);
    socket.setTimeout(options.idleTimeoutMs, () => {
      logger.info({ connection }, "scheme connection idle past its timeout; closing");
      socket.destroy();
    });
    socket.on("error", (error) => logger.info({ connection, err: error.message }, "scheme connection error"));
    socket.on("close", () => {
      sockets.delete(socket);
      iso8583InboundConnections.set(sockets.size);
    });

    let inflight = 0;
    const waiting: Message[] = [];
    const framed = new FramedSocket(socket, options.codec, {
      message(message) {
        waiting.push(message);
        pump();
      },
      malformed(error, mti, frameBytes) {
        iso8583InboundRejected.inc({ code: error.code });
        logger.warn({ connection, code: error.code, position: error.position, valueMasked: error.valueMasked, mti, frameBytes }, "malformed message");
        if (mti !== undefined && expectsResponse(mti)) framed.send(buildResponse({ mti, fields: {} }, "formatError"));
      },
      streamBroken(error) {
        iso8583InboundRejected.inc({ code: error.code });
        logger.warn({ connection, code: error.code, position: error.position }, "frame stream out of step; closing the connection");
      },
    });

    // At most inflightPerConnectionMax messages are decided at once; reading pauses meanwhile.
    function pump(): void {
      while (inflight < options.inflightPerConnectionMax && waiting.length > 0) {
        const message = waiting.shift() as Message;
        inflight++;
        const work = answer(message).finally(() => {
          inflight--;
          running.delete(work);
          pump();
        });
        running.add(work);
      }
      if (waiting.length > 0 || inflight >= options.inflightPerConnectionMax) socket.pause();
      else if (socket.isPaused()) socket.resume();
    }

    async function answer(message: Message): Promise<void> {
      const startedMs = performance.now();
      const observe = (outcome: string) => iso8583MessageDuration.observe({ direction: "inbound", message_class: messageClassOf(message.mti), outcome }, (performance.now() - startedMs) / 1_000);
      try {
        const result = await handleInbound(deps, message, { connection });
        if (logger.isLevelEnabled("debug")) logger.debug({ connection, message: maskMessage(message, options.codec.dictionary), decision: result.decision, tenantId: result.tenantId }, "inbound message");
        if (result.response === undefined) {
          logger.info({ connection, mti: message.mti, stan: textField(message, 11) }, "message needs no answer; not answered");
          return;
        }
        if (textField(result.response, 39) === "30") {
          logger.warn({ connection, message: maskMessage(message, options.codec.dictionary), decision: result.decision }, "format error");
        }
        iso8583InboundMessages.inc({ mti: message.mti, response_code: String(result.response.fields[39]) });
        framed.send(result.response);
        observe("answered");
      } catch (error) {
        // Nothing was committed: the scheme repeats, or stands in for us.
        logger.error({ connection, mti: message.mti, stan: textField(message, 11), err: error instanceof Error ? error.message : String(error) }, "inbound message failed");
        if (expectsResponse(message.mti)) framed.send(buildResponse(message, "systemMalfunction"));
        observe("failed");
      }
    }
  });
  server.maxConnections = options.connectionsMax;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  logger.info({ port, dictionary: options.codec.dictionary.name, framing: options.codec.framing }, "ISO 8583 endpoint listening");

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
