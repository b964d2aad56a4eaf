import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { limits } from "../../src/config/limits.ts";
import type { Codec } from "../../src/gateway/framed-socket.ts";
import { identityOf, naturalKeyOf } from "../../src/normalize/from-iso8583.ts";
import {
  de, defaultFraming, iso87AsciiDictionary, textField, type Message,
} from "../../src/protocols/iso8583/index.ts";
import { cardRequest, networkRequest, reversalOf, SchemeClient } from "../support/scheme-simulator.ts";
import type { Prng } from "../sim/prng.ts";

const BIN = fileURLToPath(new URL("../../src/cli/clearline.mjs", import.meta.url));

/** One answer a client saw, for the window's counts: status and code, or "no answer". */
export interface Seen {
  at: number;         // when the answer (or the failure) arrived
  sentAt: number;
  kind: string;       // "201", "503 outcome_unknown", "no answer", "96", ...
}

export interface Serve {
  baseUrl: string;
  iso8583Port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** `clearline serve` with HTTP and the ISO 8583 endpoint on free ports. */
export async function startServe(env: Record<string, string>, logFile?: string):
  Promise<Serve> {
  const child = spawn(process.execPath,
    [BIN, "serve", "--http-port", "0", "--iso8583-port", "0"], {
      env: { ...process.env, CLEARLINE_LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", logFile ? "pipe" : "ignore", "pipe"],
    });
  child.stdout?.on("data", (chunk: Buffer) => {
    if (logFile) appendFileSync(logFile, chunk);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let seen = "";
  const ports = await new Promise<[string, number]>((resolve, reject) => {
    child.stderr?.on("data", (chunk: Buffer) => {
      seen = (seen + chunk.toString()).slice(-20_000);
      if (logFile) appendFileSync(logFile, chunk);
      const http = /serving on (http:\/\/\S+)/.exec(seen);
      const iso = /ISO 8583 scheme endpoint on port (\d+)/.exec(seen);
      if (http?.[1] && iso?.[1]) resolve([http[1], Number(iso[1])]);
    });
    void exited.then(() => reject(new Error(`serve exited before serving: ${seen}`)));
  });
  return {
    baseUrl: ports[0], iso8583Port: ports[1], child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

export interface HttpAnswer {
  status: number;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  retryAfterSeconds: number | undefined;
}

export async function httpSend(baseUrl: string, apiKey: string, method: string, path: string,
  body?: unknown, headers: Record<string, string> = {}, timeoutMs = 120_000):
  Promise<HttpAnswer | undefined> {
  try {
    const raw = Buffer.isBuffer(body);
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { "content-type": raw ? "application/octet-stream" : "application/json" }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: raw ? new Uint8Array(body) : JSON.stringify(body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = { raw: text };
    }
    const retryAfter = response.headers.get("retry-after");
    return { status: response.status, json, retryAfterSeconds: retryAfter ? Number(retryAfter) : undefined };
  } catch {
    return undefined;
  }
}

export function kindOf(answer: HttpAnswer | undefined): string {
  if (!answer) return "no answer";
  const code = typeof answer.json?.code === "string" ? ` ${answer.json.code}` : "";
  return `${answer.status}${answer.status >= 300 ? code : ""}`;
}

/** Statuses after which the same request is sent again with the same key. */
function isRetryable(answer: HttpAnswer | undefined): boolean {
  if (!answer) return true;
  if (answer.status === 503 || answer.status === 409) return answer.json?.code !== "duplicate_client_reference";
  return answer.status === 500 && answer.json?.retryable === true;
}

const retryBoundMs = 180_000;

/**
 * Sends one keyed request until it gets a final answer, as a client that retries with the same
 * key: after Retry-After (or half a second), for at most three minutes.
 */
export async function sendUntilFinal(send: () => Promise<HttpAnswer | undefined>, seen: Seen[],
  boundMs = retryBoundMs): Promise<HttpAnswer | undefined> {
  const startedAt = Date.now();
  for (;;) {
    const sentAt = Date.now();
    const answer = await send();
    seen.push({ at: Date.now(), sentAt, kind: kindOf(answer) });
    if (!isRetryable(answer)) return answer;
    if (Date.now() - startedAt > boundMs) return answer;
    const waitMs = answer?.retryAfterSeconds !== undefined ? answer.retryAfterSeconds * 1_000 : 500;
    await new Promise((resolve) => setTimeout(resolve, Math.min(waitMs, 2_000)));
  }
}

const codec: Codec = {
  dictionary: iso87AsciiDictionary, framing: defaultFraming,
  frameBytesMax: limits.iso8583.frameBytesMax,
};

/** The scheme's connection to one serve's ISO 8583 endpoint, reopened and signed on when lost. */
export class CardLink {
  private client: SchemeClient | undefined;
  private stan = 900_000;

  constructor(private readonly port: number) {}

  nextStan(): number {
    this.stan = this.stan >= 999_999 ? 1 : this.stan + 1;
    return this.stan;
  }

  async request(message: Message): Promise<Message | undefined> {
    try {
      const client = await this.connected();
      const closed = client.closed.then(() => undefined);
      const answer = await Promise.race([client.request(message, 20_000), closed]);
      if (!answer) this.client = undefined;
      return answer;
    } catch {
      await this.client?.close().catch(() => undefined);
      this.client = undefined;
      return undefined;
    }
  }

  private async connected(): Promise<SchemeClient> {
    if (this.client) return this.client;
    const client = await SchemeClient.connect("127.0.0.1", this.port, codec);
    const signOn = await client.request(networkRequest("001", this.nextStan()), 20_000);
    if (signOn.fields[39] !== "00") throw new Error(`sign-on answered ${String(signOn.fields[39])}`);
    this.client = client;
    return client;
  }

  async close(): Promise<void> {
    await this.client?.close().catch(() => undefined);
  }
}

export interface CardOriginal {
  naturalKey: string;
  responseCode: string | undefined;
  reversalAcknowledged: boolean;
}

/**
 * An authorization until it has an answer other than 96 (a repeat, 0101, after no answer or a
 * 96), then with a chance its reversal until acknowledged (0401 after no answer).
 */
export async function cardAuthorization(link: CardLink, rng: Prng, pan: string, seen: Seen[]):
  Promise<CardOriginal> {
  const message = cardRequest({
    pan, amountMinor: BigInt(rng.int(1, 500)), currencyNumeric: "840", stan: link.nextStan(),
  });
  const identity = identityOf(message);
  if (!identity) throw new Error("a card request has its identity fields");
  const original: CardOriginal = {
    naturalKey: naturalKeyOf(identity), responseCode: undefined, reversalAcknowledged: false,
  };
  original.responseCode = await untilAnswered(link, message, "0101", seen);
  if (original.responseCode === "00" && rng.chance(0.3)) {
    const reversal = reversalOf(message, { stan: link.nextStan() });
    original.reversalAcknowledged = await untilAnswered(link, reversal, "0401", seen) === "00";
  }
  return original;
}

async function untilAnswered(link: CardLink, message: Message, repeatMti: string, seen: Seen[]):
  Promise<string | undefined> {
  const startedAt = Date.now();
  for (let attempt = 0; ; attempt++) {
    const sentAt = Date.now();
    const answer = await link.request(attempt === 0 ? message : { ...message, mti: repeatMti });
    const code = answer ? textField(answer, de.responseCode) : undefined;
    seen.push({ at: Date.now(), sentAt, kind: code ?? "no answer" });
    if (code !== undefined && code !== "96") return code;
    if (Date.now() - startedAt > retryBoundMs) return code;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
