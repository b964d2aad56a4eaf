import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import type { FieldValue, Message } from "../protocols/iso8583/index.ts";
import { FramedSocket, type Codec } from "./framed-socket.ts";
import { buildResponse, expectsResponse, originalDataElements, responseMtiOf, textField } from "./messages.ts";
import { replacementAmountsField } from "./replacement-amounts.ts";

/**
 * A card scheme for tests and for trying the gateway by hand (`clearline scheme-sim`). As an
 * acquirer it connects to our endpoint and sends authorizations, repeats and reversals; as a
 * scheme it listens for our outbound messages and answers, late, never, twice or out of order.
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
      2: request.pan,
      3: request.processingCode ?? "000000",
      4: request.amountMinor.toString().padStart(12, "0"),
      7: transmission,
      11: stan,
      12: transmission.slice(4),
      13: transmission.slice(0, 4),
      32: request.acquirer ?? "423935",
      37: request.rrn ?? `${transmission.slice(0, 6)}${stan}`,
      41: request.terminal ?? "TERM0001",
      42: "MERCHANT0000001",
      49: request.currencyNumeric ?? "978",
    },
  };
}

/** A reversal (0400, or 0401/0420/0421) of `original`, with its own STAN; field 90 names the original. */
export function reversalOf(original: Message, options: { stan: number; mti?: string; transmission?: string; withPan?: boolean; actualMinor?: bigint }): Message {
  const transmission = options.transmission ?? transmissionNow();
  const fields: Record<number, FieldValue> = {};
  for (const fieldNumber of [2, 3, 4, 32, 33, 37, 41, 42, 49]) {
    const value = original.fields[fieldNumber];
    if (value !== undefined && (fieldNumber !== 2 || options.withPan !== false)) fields[fieldNumber] = value;
  }
  fields[7] = transmission;
  fields[11] = String(options.stan).padStart(6, "0");
  fields[90] = originalDataElements(original);
  // A partial reversal: the transaction stands at the actual amount (field 95).
  if (options.actualMinor !== undefined) fields[95] = replacementAmountsField(options.actualMinor);
  return { mti: options.mti ?? "0400", fields };
}

export function networkRequest(code: "001" | "002" | "301", stan: number): Message {
  return { mti: "0800", fields: { 7: transmissionNow(), 11: String(stan).padStart(6, "0"), 70: code } };
}

function matchKey(responseMti: string, message: Message): string {
  return `${responseMti}:${textField(message, 11) ?? ""}:${(textField(message, 41) ?? "").trimEnd()}`; // DE 41 is space-padded on the wire
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
    if (textField(message, 11) === undefined) {
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
        reject(new Error(`no response to ${message.mti} STAN ${textField(message, 11)} within ${timeoutMs} ms`));
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
  const fields: Record<number, FieldValue> = { ...response.fields, 39: responseCode };
  if (responseCode === "00" && request.mti.startsWith("01")) fields[38] = "SIM001";
  return { mti: response.mti, fields };
}
