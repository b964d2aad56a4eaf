import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { buildResponse } from "../../src/cards/index.ts";
import { replacementAmountsField } from "../../src/cards/replacement-amounts.ts";
import { FramedSocket, type Codec } from "../../src/gateway/framed-socket.ts";
import { institutionCode } from "../../src/normalize/from-iso8583.ts";
import { de, expectsResponse, responseMtiOf, textField, type FieldValue, type Message, type Subfields } from "../../src/protocols/iso8583/index.ts";

/**
 * A card scheme for tests, benchmarks and trying the gateway by hand (`npm run scheme-sim`,
 * ./scheme-sim.ts). As an acquirer it connects to our endpoint and sends authorizations, repeats
 * and reversals; as a scheme it listens for our outbound messages and answers, late, never, twice
 * or out of order. It is not part of clearline: it stands in for the card scheme.
 */

// ---------------------------------------------------------------------------------------------
// Messages the simulator builds.

export interface CardRequest {
  mti?: string;                 // 0100 (default), 0101, 0120, 0200, ...
  pan: string;
  amountMinor: bigint;
  currencyNumeric?: string;     // DE 49, default 978 (EUR)
  stan: number;
  transmission?: string;        // DE 7 MMDDhhmmss
  acquirer?: string;            // DE 32
  terminal?: string;            // DE 41
  rrn?: string;                 // DE 37
  processingCode?: string;      // DE 3
}

export function transmissionNow(at: Date = new Date()): string {
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(at.getUTCMonth() + 1)}${two(at.getUTCDate())}${two(at.getUTCHours())}${two(at.getUTCMinutes())}${two(at.getUTCSeconds())}`;
}

export function cardRequest(request: CardRequest): Message {
  const stan = String(request.stan).padStart(6, "0");
  const transmission = request.transmission ?? transmissionNow();
  return {
    mti: request.mti ?? "0100",
    fields: {
      [de.primaryAccountNumber]: request.pan,
      [de.processingCode]: request.processingCode ?? "000000",
      [de.amountTransaction]: request.amountMinor.toString().padStart(12, "0"),
      [de.transmissionDateTime]: transmission,
      [de.systemTraceAuditNumber]: stan,
      [de.timeLocalTransaction]: transmission.slice(4),
      [de.dateLocalTransaction]: transmission.slice(0, 4),
      [de.acquiringInstitutionIdentificationCode]: request.acquirer ?? "423935",
      [de.retrievalReferenceNumber]: request.rrn ?? `${transmission.slice(0, 6)}${stan}`,
      [de.cardAcceptorTerminalIdentification]: request.terminal ?? "TERM0001",
      [de.cardAcceptorIdentificationCode]: "MERCHANT0000001",
      [de.currencyCodeTransaction]: request.currencyNumeric ?? "978",
    },
  };
}

/** Field 90 for a reversal of `original` (the original MTI, 11, 7, 32 and 33). */
export function originalDataElements(original: Message): Subfields {
  return {
    originalMessageTypeIdentifier: original.mti,
    originalSystemTraceAuditNumber: textField(original, de.systemTraceAuditNumber) ?? "000000",
    originalTransmissionDateTime: textField(original, de.transmissionDateTime) ?? "0000000000",
    originalAcquiringInstitutionIdentificationCode: institutionCode(textField(original, de.acquiringInstitutionIdentificationCode)),
    originalForwardingInstitutionIdentificationCode: institutionCode(textField(original, de.forwardingInstitutionIdentificationCode)),
  };
}

/** What a reversal repeats of its original, beside its own 7, 11, 90 (and 95 when partial). */
const reversalEchoedFields = [
  de.primaryAccountNumber, de.processingCode, de.amountTransaction, de.acquiringInstitutionIdentificationCode,
  de.forwardingInstitutionIdentificationCode, de.retrievalReferenceNumber, de.cardAcceptorTerminalIdentification,
  de.cardAcceptorIdentificationCode, de.currencyCodeTransaction,
];

/** A reversal (0400, or 0401/0420/0421) of `original`, with its own STAN; field 90 names the original. */
export function reversalOf(original: Message, options: { stan: number; mti?: string; transmission?: string; withPan?: boolean; actualMinor?: bigint }): Message {
  const transmission = options.transmission ?? transmissionNow();
  const fields: Record<number, FieldValue> = {};
  for (const fieldNumber of reversalEchoedFields) {
    const value = original.fields[fieldNumber];
    if (value !== undefined && (fieldNumber !== de.primaryAccountNumber || options.withPan !== false)) fields[fieldNumber] = value;
  }
  fields[de.transmissionDateTime] = transmission;
  fields[de.systemTraceAuditNumber] = String(options.stan).padStart(6, "0");
  fields[de.originalDataElements] = originalDataElements(original);
  // A partial reversal: the transaction stands at the actual amount (field 95).
  if (options.actualMinor !== undefined) fields[de.replacementAmounts] = replacementAmountsField(options.actualMinor);
  return { mti: options.mti ?? "0400", fields };
}

export function networkRequest(code: "001" | "002" | "301", stan: number): Message {
  const fields = {
    [de.transmissionDateTime]: transmissionNow(), [de.systemTraceAuditNumber]: String(stan).padStart(6, "0"), [de.networkManagementInformationCode]: code,
  };
  return { mti: "0800", fields };
}

function matchKey(responseMti: string, message: Message): string {
  const terminal = textField(message, de.cardAcceptorTerminalIdentification) ?? "";
  return `${responseMti}:${textField(message, de.systemTraceAuditNumber) ?? ""}:${terminal.trimEnd()}`; // DE 41 is space-padded on the wire
}

// ---------------------------------------------------------------------------------------------
// Acquirer role: connects to our endpoint.

export class SchemeClient {
  private readonly waiters = new Map<string, Array<(message: Message) => void>>(); // a request and its repeat share a key
  private readonly early = new Map<string, Message[]>();
  private readonly unmatched: Message[] = [];
  private unmatchedWaiter: ((message: Message) => void) | undefined;
  private readonly framed: FramedSocket;
  readonly closed: Promise<void>;

  private constructor(readonly socket: Socket, codec: Codec) {
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
    this.framed = new FramedSocket(socket, codec, {
      message: (message) => this.receive(message),
      malformed: () => undefined,
      streamBroken: () => undefined,
    });
  }

  /** Over a socket connected by the caller (a TLS link with a client certificate, for one). */
  static over(socket: Socket, codec: Codec): SchemeClient {
    socket.on("error", () => undefined);
    return new SchemeClient(socket, codec);
  }

  static async connect(host: string, port: number, codec: Codec, options: { localAddress?: string } = {}): Promise<SchemeClient> {
    const socket = connect({ host, port, ...(options.localAddress ? { localAddress: options.localAddress } : {}) });
    socket.setNoDelay(true);
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    socket.on("error", () => undefined);
    return new SchemeClient(socket, codec);
  }

  private receive(message: Message): void {
    const key = matchKey(message.mti, message);
    const waiter = this.waiters.get(key)?.shift();
    if (waiter !== undefined) {
      if (this.waiters.get(key)?.length === 0) this.waiters.delete(key);
      waiter(message);
      return;
    }
    if (textField(message, de.systemTraceAuditNumber) === undefined) {
      if (this.unmatchedWaiter !== undefined) {
        const resolve = this.unmatchedWaiter;
        this.unmatchedWaiter = undefined;
        resolve(message);
      } else this.unmatched.push(message);
      return;
    }
    this.early.set(key, [...(this.early.get(key) ?? []), message]);
  }

  /** Sends `message` and resolves with its response (matched by response MTI, STAN and terminal). */
  request(message: Message, timeoutMs = 15_000): Promise<Message> {
    const key = matchKey(responseMtiOf(message.mti), message);
    const response = new Promise<Message>((resolve, reject) => {
      const early = this.early.get(key)?.shift();
      if (early !== undefined) return resolve(early);
      const waiter = (answer: Message) => {
        clearTimeout(timer);
        resolve(answer);
      };
      const timer = setTimeout(() => {
        this.waiters.set(key, (this.waiters.get(key) ?? []).filter((w) => w !== waiter));
        reject(new Error(`no response to ${message.mti} STAN ${textField(message, de.systemTraceAuditNumber)} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(key, [...(this.waiters.get(key) ?? []), waiter]);
    });
    this.framed.send(message);
    return response;
  }

  /** Sends a frame body as is (a malformed message, for tests). */
  sendFrameBody(body: Buffer): void {
    const header = Buffer.alloc(2);
    header.writeUInt16BE(body.length);
    this.socket.write(Buffer.concat([header, body]));
  }

  /** The next response that carried no STAN (a format-error answer to an unreadable message). */
  nextUnmatched(timeoutMs = 15_000): Promise<Message> {
    const ready = this.unmatched.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no unmatched response")), timeoutMs);
      this.unmatchedWaiter = (message) => {
        clearTimeout(timer);
        resolve(message);
      };
    });
  }

  close(): Promise<void> {
    this.socket.end();
    this.socket.destroy();
    return this.closed;
  }
}

// ---------------------------------------------------------------------------------------------
// Scheme role: listens for our outbound messages.

export type SchemeAction =
  | { kind: "answer"; responseCode: string; delayMs?: number }
  | { kind: "duplicate"; responseCode: string }   // the same response twice
  | { kind: "hold"; responseCode: string }        // kept until releaseHeld(): answers out of order
  | { kind: "drop" };                              // never answered

export type SchemeBehaviour = (message: Message) => SchemeAction;

export const approveEverything: SchemeBehaviour = () => ({ kind: "answer", responseCode: "00" });

export class SchemeServer {
  readonly received: Message[] = [];
  private readonly sockets = new Set<FramedSocket>();
  private held: Array<() => void> = [];
  private listeners: Array<() => void> = [];
  behaviour: SchemeBehaviour;

  private constructor(private readonly server: Server, readonly port: number, behaviour: SchemeBehaviour) {
    this.behaviour = behaviour;
  }

  static async listen(port: number, codec: Codec, behaviour: SchemeBehaviour = approveEverything, host = "127.0.0.1"): Promise<SchemeServer> {
    const created: { server?: SchemeServer } = {}; // the connection handler runs only after listen()
    const server = createServer((socket) => {
      socket.setNoDelay(true);
      socket.on("error", () => undefined);
      const framed = new FramedSocket(socket, codec, {
        message: (message) => created.server?.receive(framed, message),
        malformed: () => undefined,
        streamBroken: () => undefined,
      });
      created.server?.sockets.add(framed);
      const scheme = created.server;
      if (scheme) scheme.peakConnections = Math.max(scheme.peakConnections, scheme.sockets.size);
      socket.once("close", () => created.server?.sockets.delete(framed));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => resolve());
    });
    created.server = new SchemeServer(server, (server.address() as AddressInfo).port, behaviour);
    return created.server;
  }

  get connectionCount(): number {
    return this.sockets.size;
  }

  /** The most connections open at once so far (a fleet holds one link to the scheme at a time). */
  peakConnections = 0;

  private receive(framed: FramedSocket, message: Message): void {
    this.received.push(message);
    for (const listener of this.listeners) listener();
    if (!expectsResponse(message.mti)) return;
    const action: SchemeAction = message.mti.startsWith("08") ? { kind: "answer", responseCode: "00" } : this.behaviour(message);
    const respond = (code: string) => framed.send(schemeResponse(message, code));
    switch (action.kind) {
      case "answer":
        if (action.delayMs === undefined) respond(action.responseCode);
        else setTimeout(() => respond(action.responseCode), action.delayMs).unref();
        break;
      case "duplicate":
        respond(action.responseCode);
        respond(action.responseCode);
        break;
      case "hold":
        this.held.push(() => respond(action.responseCode));
        break;
      case "drop":
        break;
    }
  }

  /** Answers every held message, last received first. */
  releaseHeldInReverse(): number {
    const held = this.held.reverse();
    this.held = [];
    for (const answer of held) answer();
    return held.length;
  }

  get heldCount(): number {
    return this.held.length;
  }

  /** Resolves when `predicate` holds over the messages received so far. */
  waitFor(predicate: (received: readonly Message[]) => boolean, timeoutMs = 15_000): Promise<void> {
    if (predicate(this.received)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners = this.listeners.filter((l) => l !== check);
        reject(new Error(`scheme simulator: condition not met within ${timeoutMs} ms (${this.received.map((m) => m.mti).join(",")})`));
      }, timeoutMs);
      const check = () => {
        if (!predicate(this.received)) return;
        clearTimeout(timer);
        this.listeners = this.listeners.filter((l) => l !== check);
        resolve();
      };
      this.listeners.push(check);
    });
  }

  /** Drops every connection (the gateway must reconnect). */
  dropConnections(): void {
    for (const framed of this.sockets) framed.socket.destroy();
  }

  async close(): Promise<void> {
    this.dropConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A scheme's answer: the request's echo fields, an authorization id when approved, DE 39. */
export function schemeResponse(request: Message, responseCode: string): Message {
  const response = buildResponse(request, "approved");
  const fields: Record<number, FieldValue> = { ...response.fields, [de.responseCode]: responseCode };
  if (responseCode === "00" && request.mti.startsWith("01")) fields[de.authorizationIdentificationResponse] = "SIM001";
  return { mti: response.mti, fields };
}
