import { connect, type Socket } from "node:net";
import { assert } from "../assert.ts";
import type {
  CardAuthorizationRequest, Exchange, OutboundRow, SchemeLink, SchemeLinkStore, UndecidedHandler,
} from "../cards/index.ts";
import type { Logger } from "../observability/logger.ts";
import { performance } from "node:perf_hooks";
import { iso8583LateResponses, iso8583MessageDuration, iso8583OutboundInflight, iso8583ReversalSends, iso8583ReversalsPending, messageClassOf } from "../observability/metrics-gateway.ts";
import { currencyByCode } from "../protocols/iso4217/currency.ts";
import { de, textField, type FieldValue, type Message } from "../protocols/iso8583/index.ts";
import { FramedSocket, type Codec } from "./framed-socket.ts";
import { StanAllocator } from "./stan.ts";

/**
 * The acquirer side: one connection to a scheme endpoint, many requests in flight on it, each
 * matched to its response by MTI class + STAN + terminal + transmission time. Signs on at
 * connect, echoes when idle, reconnects with backoff. A periodic job resends pending reversals
 * from the database (0400, then 0401 repeats with backoff) until each is acknowledged by a 0410,
 * across reconnects and restarts, and reverses authorizations whose caller died mid-wait. What it
 * keeps in the database (STAN counter, pending reversals, late responses) it keeps through the
 * card-messages service's SchemeLinkStore, handed in by the composition root.
 */
export interface OutboundOptions {
  name: string;                     // the connection's name: STAN counter, rows' connection column
  host: string;
  port: number;
  codec: Codec;
  acquirerId: string;               // DE 32, acquiring institution identification code
  responseTimeoutMs: number;
  inflightMax: number;
  slotWaitMs: number;
  echoIdleMs: number;
  reconnectBackoffMs: number;
  reconnectBackoffMaxMs: number;
  reversalRetryBackoffMs: number;
  reversalRetryBackoffMaxMs: number;
  reversalJobIntervalMs: number;
  reversalBatchRowsMax: number;
  stanBlockSize: number;
}

interface Pending {
  settle(exchange: Exchange): void;
  settled: boolean;
  late: Message[];   // responses that arrived after a timeout, before the caller finished deciding
}

/** MTI class digit + STAN + terminal + transmission time: what a response echoes of its request. */
export function matchKeyOf(message: Message): string {
  const stan = textField(message, de.systemTraceAuditNumber) ?? "";
  const terminal = textField(message, de.cardAcceptorTerminalIdentification) ?? "";
  const transmission = textField(message, de.transmissionDateTime) ?? "";
  return `${message.mti[1]}:${stan}:${terminal}:${transmission}`;
}

export function transmissionDateTime(at: Date = new Date()): string {
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(at.getUTCMonth() + 1)}${two(at.getUTCDate())}${two(at.getUTCHours())}${two(at.getUTCMinutes())}${two(at.getUTCSeconds())}`;
}

/** RRN (DE 37, 12 characters): last digit of the year, day of the year, hour, STAN. */
export function retrievalReferenceNumber(stan: string, at: Date = new Date()): string {
  const start = Date.UTC(at.getUTCFullYear(), 0, 0);
  const dayOfYear = Math.floor((at.getTime() - start) / 86_400_000);
  return `${at.getUTCFullYear() % 10}${String(dayOfYear).padStart(3, "0")}${String(at.getUTCHours()).padStart(2, "0")}${stan}`;
}

/** What a reversal repeats of its original authorization, beside its own 7, 11 and 90. */
const reversalEchoedFields = [
  de.processingCode, de.amountTransaction,
  de.acquiringInstitutionIdentificationCode, de.forwardingInstitutionIdentificationCode, de.retrievalReferenceNumber,
  de.cardAcceptorTerminalIdentification, de.cardAcceptorIdentificationCode, de.currencyCodeTransaction,
];

export class OutboundConnection implements SchemeLink {
  private framed: FramedSocket | undefined;
  private socket: Socket | undefined;
  private signedOn = false;
  private stopped = false;
  private running = false;
  private readonly pending = new Map<string, Pending>();
  private inflight = 0;
  private readonly slotWaiters: Array<() => void> = [];
  private lastTrafficMs = Date.now();
  private echoTimer: NodeJS.Timeout | undefined;
  private jobTimer: NodeJS.Timeout | undefined;
  private jobRunning: Promise<void> = Promise.resolve();
  private loop: Promise<void> = Promise.resolve();
  private wakeReconnect: (() => void) | undefined;
  readonly stans: StanAllocator;
  private readonly logger: Logger;
  undecidedHandler: UndecidedHandler | undefined;

  constructor(
    private readonly store: SchemeLinkStore, logger: Logger, readonly options: OutboundOptions,
  ) {
    assert(options.inflightMax > 0 && options.responseTimeoutMs > 0, "outbound bounds are positive");
    this.logger = logger.child({ component: "iso8583-outbound", connection: options.name });
    this.stans = new StanAllocator(store, options.name, options.stanBlockSize);
  }

  get isSignedOn(): boolean {
    return this.signedOn;
  }

  /**
   * Connects and keeps the link up until stop(); may start again after a stop (in a fleet the
   * link runs while this process holds its lease: pending reversals and the STAN counter are in
   * the database, so whichever process holds it carries on from there).
   */
  start(): void {
    assert(!this.running, "the scheme link is started once until it is stopped");
    this.running = true;
    this.stopped = false;
    this.loop = this.run();
    this.jobTimer = setInterval(() => this.kickReversals(), this.options.reversalJobIntervalMs);
    this.jobTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.jobTimer) clearInterval(this.jobTimer);
    if (this.echoTimer) clearInterval(this.echoTimer);
    this.wakeReconnect?.();
    this.socket?.destroy();
    await this.loop;
    await this.jobRunning;
    this.running = false;
  }

  // --- in-flight slots -----------------------------------------------------------------------

  /** A slot among inflightMax, waiting at most slotWaitMs; undefined when none freed in time. */
  async acquireSlot(): Promise<(() => void) | undefined> {
    if (this.inflight >= this.options.inflightMax) {
      const freed = await new Promise<boolean>((resolve) => {
        const waiter = () => {
          clearTimeout(timer);
          resolve(true);
        };
        const timer = setTimeout(() => {
          const index = this.slotWaiters.indexOf(waiter);
          if (index >= 0) this.slotWaiters.splice(index, 1);
          resolve(false);
        }, this.options.slotWaitMs);
        this.slotWaiters.push(waiter);
      });
      if (!freed) return undefined;
    } else {
      this.inflight++;
    }
    iso8583OutboundInflight.set(this.inflight);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.slotWaiters.shift();
      if (next !== undefined) next(); // the slot passes straight to the next waiter
      else this.inflight--;
      iso8583OutboundInflight.set(this.inflight);
    };
  }

  // --- exchanges -----------------------------------------------------------------------------

  /**
   * Sends `message` and waits for its response, the timeout or the loss of the connection. The
   * match stays registered until `finish(matchKey)`, so that a response arriving between the
   * timeout and the caller's decision is kept and recorded as late.
   */
  exchange(message: Message): Promise<Exchange> {
    const key = matchKeyOf(message);
    assert(!this.pending.has(key), `match key ${key} is unique among requests in flight`);
    const startedMs = performance.now();
    return new Promise<Exchange>((resolve) => {
      const entry: Pending = {
        settled: false,
        late: [],
        settle: (exchange) => {
          if (entry.settled) return;
          entry.settled = true;
          clearTimeout(timer);
          if (exchange.kind !== "not_sent") {
            iso8583MessageDuration.observe({ direction: "outbound", message_class: messageClassOf(message.mti), outcome: exchange.kind }, (performance.now() - startedMs) / 1_000);
          }
          resolve(exchange);
        },
      };
      const timer = setTimeout(() => entry.settle({ kind: "timeout" }), this.options.responseTimeoutMs);
      this.pending.set(key, entry);
      if (!this.signedOn && !message.mti.startsWith("08")) return entry.settle({ kind: "not_sent" });
      if (this.framed === undefined || !this.framed.send(message)) return entry.settle({ kind: "not_sent" });
      this.lastTrafficMs = Date.now();
    });
  }

  /** Unregisters a finished exchange; returns responses that arrived after it was settled. */
  finish(message: Message): Message[] {
    const key = matchKeyOf(message);
    const entry = this.pending.get(key);
    this.pending.delete(key);
    return entry?.late ?? [];
  }

  private onMessage(message: Message): void {
    this.lastTrafficMs = Date.now();
    const key = matchKeyOf(message);
    const entry = this.pending.get(key);
    if (entry !== undefined && !entry.settled) return entry.settle({ kind: "response", response: message });
    if (entry !== undefined) {
      entry.late.push(message);
      return;
    }
    void this.unmatched(message, key);
  }

  /** A response nobody waits for: a reversal acknowledgement, a late answer, or noise. */
  private async unmatched(message: Message, key: string): Promise<void> {
    try {
      const code = String(message.fields[de.responseCode] ?? "");
      const stan = textField(message, de.systemTraceAuditNumber);
      if (message.mti.startsWith("041") || message.mti.startsWith("043")) {
        const acknowledged = await this.store.acknowledgeReversal(this.options.name, key);
        this.logger.info({ mti: message.mti, stan, acknowledged }, acknowledged ? "reversal acknowledged" : "reversal response matches no pending reversal");
        return;
      }
      if (message.mti.startsWith("011") || message.mti.startsWith("021")) {
        const recorded = await this.recordLate(message);
        this.logger.warn({ mti: message.mti, stan, responseCode: code, recorded }, "late response after the reversal was decided; recorded, not approved");
        return;
      }
      this.logger.info({ mti: message.mti, stan }, "unmatched message from the scheme; ignored");
    } catch (error) {
      this.logger.error({ err: error instanceof Error ? error.message : String(error), mti: message.mti }, "recording an unmatched response failed");
    }
  }

  async recordLate(message: Message): Promise<boolean> {
    iso8583LateResponses.inc();
    const code = String(message.fields[de.responseCode] ?? "");
    return this.store.recordLateResponse(this.options.name, matchKeyOf(message), code);
  }

  matchKeyOf(message: Message): string {
    return matchKeyOf(message);
  }

  // --- messages we build ---------------------------------------------------------------------

  async networkMessage(code: "001" | "002" | "301"): Promise<Message> {
    const stan = await this.stans.next();
    const fields = {
      [de.transmissionDateTime]: transmissionDateTime(),
      [de.systemTraceAuditNumber]: stan,
      [de.networkManagementInformationCode]: code,
    };
    return { mti: "0800", fields };
  }

  /** The 0100 for a card authorization the acquirer side sends (POST /v1/card-authorizations). */
  authorizationRequest(request: CardAuthorizationRequest, stan: string): Message {
    const currency = currencyByCode(request.currency);
    if (currency === undefined) throw new Error(`currency ${request.currency} is validated by the route`);
    const transmission = transmissionDateTime();
    return {
      mti: "0100",
      fields: {
        [de.primaryAccountNumber]: request.pan,
        [de.processingCode]: "000000",
        [de.amountTransaction]: request.amountMinor.toString().padStart(12, "0"),
        [de.transmissionDateTime]: transmission,
        [de.systemTraceAuditNumber]: stan,
        [de.timeLocalTransaction]: transmission.slice(4),
        [de.dateLocalTransaction]: transmission.slice(0, 4),
        [de.acquiringInstitutionIdentificationCode]: this.options.acquirerId,
        [de.retrievalReferenceNumber]: retrievalReferenceNumber(stan),
        [de.cardAcceptorTerminalIdentification]: request.terminal.padEnd(8, " "),
        [de.cardAcceptorIdentificationCode]: request.merchant.padEnd(15, " "),
        [de.currencyCodeTransaction]: currency.numeric,
      },
    };
  }

  /** The 0400 for an authorization whose outcome is unknown: field 90 names the original. */
  reversalFor(original: Record<string, FieldValue>, stan: string): Message {
    const fields: Record<number, FieldValue> = {};
    for (const fieldNumber of reversalEchoedFields) {
      const value = original[fieldNumber];
      if (value !== undefined) fields[fieldNumber] = value;
    }
    fields[de.transmissionDateTime] = transmissionDateTime();
    fields[de.systemTraceAuditNumber] = stan;
    const institution = (fieldNumber: number) => String(original[fieldNumber] ?? "").padStart(11, "0");
    fields[de.originalDataElements] = {
      originalMessageTypeIdentifier: "0100",
      originalSystemTraceAuditNumber: String(original[de.systemTraceAuditNumber]),
      originalTransmissionDateTime: String(original[de.transmissionDateTime]),
      originalAcquiringInstitutionIdentificationCode: institution(de.acquiringInstitutionIdentificationCode),
      originalForwardingInstitutionIdentificationCode: institution(de.forwardingInstitutionIdentificationCode),
    };
    return { mti: "0400", fields };
  }

  // --- connection loop -----------------------------------------------------------------------

  private async run(): Promise<void> {
    let backoffMs = this.options.reconnectBackoffMs;
    while (!this.stopped) {
      const socket = await this.connectOnce();
      if (socket !== undefined) {
        const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
        if (await this.signOn()) {
          backoffMs = this.options.reconnectBackoffMs;
          this.kickReversals();
        } else {
          socket.destroy();
        }
        await closed;
        this.disconnected();
      }
      if (this.stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, backoffMs);
        this.wakeReconnect = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      backoffMs = Math.min(backoffMs * 2, this.options.reconnectBackoffMaxMs);
    }
  }

  private async connectOnce(): Promise<Socket | undefined> {
    const socket = connect({ host: this.options.host, port: this.options.port });
    socket.setNoDelay(true);
    const connected = await new Promise<boolean>((resolve) => {
      socket.once("connect", () => resolve(true));
      socket.once("error", () => resolve(false));
    });
    if (!connected || this.stopped) {
      socket.destroy();
      return undefined;
    }
    socket.on("error", (error) => this.logger.info({ err: error.message }, "scheme connection error"));
    this.socket = socket;
    this.framed = new FramedSocket(socket, this.options.codec, {
      message: (message) => this.onMessage(message),
      malformed: (error, mti) => this.logger.warn({ code: error.code, position: error.position, valueMasked: error.valueMasked, mti }, "malformed message from the scheme"),
      streamBroken: (error) => this.logger.warn({ code: error.code }, "frame stream from the scheme out of step; reconnecting"),
    });
    this.logger.info({ host: this.options.host, port: this.options.port }, "connected to the scheme");
    return socket;
  }

  private async signOn(): Promise<boolean> {
    const request = await this.networkMessage("001");
    const exchange = await this.exchange(request);
    this.finish(request);
    if (exchange.kind !== "response" || exchange.response.fields[de.responseCode] !== "00") {
      this.logger.warn({ outcome: exchange.kind }, "sign-on not acknowledged; reconnecting");
      return false;
    }
    this.signedOn = true;
    this.lastTrafficMs = Date.now();
    this.echoTimer = setInterval(() => void this.echoIfIdle(), Math.max(1, Math.floor(this.options.echoIdleMs / 2)));
    this.echoTimer.unref();
    this.logger.info("signed on");
    return true;
  }

  private async echoIfIdle(): Promise<void> {
    if (!this.signedOn || Date.now() - this.lastTrafficMs < this.options.echoIdleMs) return;
    this.lastTrafficMs = Date.now();
    const request = await this.networkMessage("301");
    const exchange = await this.exchange(request);
    this.finish(request);
    if (exchange.kind !== "response") {
      this.logger.warn({ outcome: exchange.kind }, "echo test unanswered; reconnecting");
      this.socket?.destroy();
    }
  }

  private disconnected(): void {
    const wasSignedOn = this.signedOn;
    this.signedOn = false;
    this.framed = undefined;
    this.socket = undefined;
    if (this.echoTimer) clearInterval(this.echoTimer);
    for (const entry of this.pending.values()) entry.settle({ kind: "connection_lost" });
    if (wasSignedOn) this.logger.warn("scheme connection lost");
  }

  // --- reversal job --------------------------------------------------------------------------

  /** Runs the reversal job now (after a reversal was decided, after sign-on), never two at once. */
  kickReversals(): void {
    if (this.stopped) return;
    this.jobRunning = this.jobRunning.then(() => this.reversalJob()).catch((error: unknown) => {
      this.logger.warn({ err: error instanceof Error ? error.message : String(error) }, "reversal job failed; it runs again at its next interval");
    });
  }

  private async reversalJob(): Promise<void> {
    if (this.stopped) return;
    if (this.undecidedHandler !== undefined) {
      const { name, responseTimeoutMs, reversalBatchRowsMax } = this.options;
      const stale = await this.store.undecidedSends(name, responseTimeoutMs * 2, reversalBatchRowsMax);
      const waitedFor = new Set(this.pending.keys());
      for (const row of stale) if (!waitedFor.has(row.matchKey)) await this.undecidedHandler(row);
    }
    if (this.signedOn) {
      for (const row of await this.store.dueReversals(this.options.name, this.options.reversalBatchRowsMax)) {
        if (!this.signedOn || this.stopped) break;
        await this.sendReversal(row);
      }
    }
    iso8583ReversalsPending.set(await this.store.pendingReversalCount(this.options.name));
  }

  private async sendReversal(row: OutboundRow): Promise<void> {
    assert(row.reversalFields !== null, "a pending reversal has its persisted message");
    const fields: Record<number, FieldValue> = {};
    for (const [key, value] of Object.entries(row.reversalFields)) fields[Number(key)] = value;
    const mti = row.reversalSends === 0 ? "0400" : "0401";
    if (this.framed === undefined || !this.framed.send({ mti, fields })) return;
    this.lastTrafficMs = Date.now();
    iso8583ReversalSends.inc({ mti });
    const nextInMs = Math.min(this.options.reversalRetryBackoffMs * 2 ** Math.min(row.reversalSends, 30), this.options.reversalRetryBackoffMaxMs);
    await this.store.markReversalSent(row.tenantId, row.idemKey, nextInMs);
    const stan = fields[de.systemTraceAuditNumber];
    this.logger.info({ tenantId: row.tenantId, mti, stan, originalStan: row.stan, sends: row.reversalSends + 1 }, "reversal sent");
  }
}
