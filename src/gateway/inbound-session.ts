import type { Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { buildResponse, type CardIssuer } from "../cards/index.ts";
import { isDatabaseUnavailable } from "../db/failure-kind.ts";
import type { Logger } from "../observability/logger.ts";
import type { RepeatedFailureLog } from "../observability/repeated-failure-log.ts";
import { iso8583InboundClosedConnections, iso8583InboundMessages, iso8583InboundRejected, iso8583MessageDuration, messageClassOf } from "../observability/metrics-gateway.ts";
import {
  de, expectsResponse, isRequestOrAdvice, maskMessage, textField, type Message,
} from "../protocols/iso8583/index.ts";
import { FramedSocket, type Codec } from "./framed-socket.ts";
import { answerInbound } from "./network-management.ts";

/** What a session needs: the issuer side that decides its messages, and where it logs. */
export interface SessionDependencies {
  issuer: CardIssuer;
  logger: Logger;
  /** Messages answered 96 as the database does not answer: counted, a line per interval (0082). */
  unavailable: RepeatedFailureLog;
}

export interface SessionOptions {
  codec: Codec;
  inflightPerConnectionMax: number;
  idleTimeoutMs: number;
  frameStartedTimeoutMs: number;
  requireSignOn: boolean;
  /**
   * Admission's view of this connection (inbound-endpoint.ts): told when it signs on or off and
   * when a message arrives. Signed on means a 0800/0820 sign-on (DE 70 = 001); with sign-on not
   * required, the first request or advice that unpacked (docs/decisions/0064).
   */
  link?: { signedOn(value: boolean): void; active(): void };
}

/**
 * One admitted scheme connection: frames in, decisions, responses out. A message that cannot be
 * read is answered with a format error when its MTI can be read; a frame without a readable MTI
 * (an empty frame included) cannot be answered and closes the connection, as does a frame that
 * stalls half-sent. With sign-on required, financial messages before a 0800 sign-on are answered
 * 91 and have no effect.
 */
export function runInboundSession(deps: SessionDependencies, socket: Socket, connection: string, options: SessionOptions, running: Set<Promise<void>>): void {
  const { logger, codec } = { logger: deps.logger, codec: options.codec };
  const close = (reason: string) => {
    iso8583InboundClosedConnections.inc({ reason });
    socket.destroy();
  };
  socket.setNoDelay(true);
  socket.setTimeout(options.idleTimeoutMs, () => {
    logger.info({ connection }, "scheme connection idle past its timeout; closing");
    close("idle");
  });
  const send = (message: Message) => framed.send(message);
  const session: SessionContext = { ...deps, logger, codec, connection, send };
  let signedOn = false;
  let inflight = 0;
  const waiting: Message[] = [];
  const framed = new FramedSocket(socket, codec, {
    message(message) {
      options.link?.active();
      waiting.push(message);
      pump();
    },
    malformed(error, mti, frameBytes) {
      iso8583InboundRejected.inc({ code: error.code });
      logger.warn({ connection, code: error.code, position: error.position, valueMasked: error.valueMasked, mti, frameBytes }, "malformed message");
      if (mti === undefined) return close("mti_unreadable");
      if (expectsResponse(mti)) framed.send(buildResponse({ mti, fields: {} }, "formatError"));
    },
    streamBroken(error) {
      iso8583InboundRejected.inc({ code: error.code });
      iso8583InboundClosedConnections.inc({ reason: "stream_broken" });
      logger.warn({ connection, code: error.code, position: error.position }, "frame stream out of step; closing the connection");
    },
    frameStalled(bufferedBytes) {
      iso8583InboundClosedConnections.inc({ reason: "frame_deadline" });
      logger.warn({ connection, bufferedBytes, deadlineMs: options.frameStartedTimeoutMs }, "a started frame did not finish in time; closing the connection");
    },
  }, { frameStartedTimeoutMs: options.frameStartedTimeoutMs });

  /** Sign-on and sign-off take effect in arrival order, before any later message is decided. */
  function signOnBefore(message: Message): boolean {
    // What this endpoint cannot take (9999, an instruction) is answered 30, signed on or not.
    if (!isRequestOrAdvice(message.mti)) return true;
    if (message.mti.startsWith("08")) {
      const code = textField(message, de.networkManagementInformationCode);
      if (code === "001" || code === "002") {
        signedOn = code === "001";
        options.link?.signedOn(signedOn);
      }
      return true;
    }
    if (!options.requireSignOn && !signedOn) {
      signedOn = true;
      options.link?.signedOn(true);
    }
    return signedOn;
  }

  // At most inflightPerConnectionMax messages are decided at once; reading pauses meanwhile.
  function pump(): void {
    while (inflight < options.inflightPerConnectionMax && waiting.length > 0) {
      const message = waiting.shift() as Message;
      inflight++;
      const work = answerMessage(session, message, signOnBefore(message)).finally(() => {
        inflight--;
        running.delete(work);
        pump();
      });
      running.add(work);
    }
    if (waiting.length > 0 || inflight >= options.inflightPerConnectionMax) socket.pause();
    else if (socket.isPaused()) socket.resume();
  }
}

/** What answering one message needs of its connection. */
interface SessionContext {
  issuer: CardIssuer;
  logger: Logger;
  unavailable: RepeatedFailureLog;
  codec: Codec;
  connection: string;
  send(message: Message): void;
}

/** Decides one message and sends its response; a message before sign-on (when required) is answered 91. */
async function answerMessage(session: SessionContext, message: Message, admitted: boolean): Promise<void> {
  const { issuer, logger, codec, connection } = session;
  const startedMs = performance.now();
  const observe = (outcome: string) => iso8583MessageDuration.observe({ direction: "inbound", message_class: messageClassOf(message.mti), outcome }, (performance.now() - startedMs) / 1_000);
  if (!admitted) {
    const stan = textField(message, de.systemTraceAuditNumber);
    logger.warn({ connection, mti: message.mti, stan }, "financial message before sign-on; answered 91, no effect");
    if (expectsResponse(message.mti)) session.send(buildResponse(message, "signOnRequired"));
    observe("not_signed_on");
    return;
  }
  try {
    const result = await answerInbound(issuer, message, { connection });
    if (logger.isLevelEnabled("debug")) logger.debug({ connection, message: maskMessage(message, codec.dictionary), decision: result.decision, tenantId: result.tenantId }, "inbound message");
    if (result.response === undefined) {
      const stan = textField(message, de.systemTraceAuditNumber);
      logger.info({ connection, mti: message.mti, stan }, "message needs no answer; not answered");
      return;
    }
    if (textField(result.response, de.responseCode) === "30") {
      logger.warn({ connection, message: maskMessage(message, codec.dictionary), decision: result.decision }, "format error");
    }
    const responseCode = String(result.response.fields[de.responseCode]);
    iso8583InboundMessages.inc({ mti: message.mti, response_code: responseCode });
    session.send(result.response);
    observe("answered");
  } catch (error) {
    // 96: nothing was committed, or (a lost COMMIT, its message says so) the outcome is unknown;
    // either way the scheme's repeat finds the stored decision or decides it once (0078). A
    // database that does not answer is counted, not logged per message (0082).
    const err = error instanceof Error ? error.message : String(error);
    const stan = textField(message, de.systemTraceAuditNumber);
    if (isDatabaseUnavailable(error)) {
      session.unavailable.failed(error, { connection, mti: message.mti, stan });
    } else logger.error({ connection, mti: message.mti, stan, err }, "inbound message failed");
    if (expectsResponse(message.mti)) session.send(buildResponse(message, "systemMalfunction"));
    observe("failed");
  }
}
