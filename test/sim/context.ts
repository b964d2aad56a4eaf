import type { Pool } from "../../src/db/pool.ts";
import { limits } from "../../src/config/limits.ts";
import type { Codec } from "../../src/gateway/framed-socket.ts";
import { networkRequest, SchemeClient } from "../support/scheme-simulator.ts";
import { defaultFraming, iso87AsciiDictionary, type Message } from "../../src/protocols/iso8583/index.ts";
import { simBounds } from "./bounds.ts";
import type { Prng } from "./prng.ts";
import type { ServiceProcess } from "./service.ts";
import type { World } from "./world.ts";

/** What every action gets: the model, the live service, the database (for reads and the projection), the step's PRNG. */
export interface SimContext {
  world: World;
  service: ServiceProcess;
  pool: Pool;
  rng: Prng;
  projection: boolean;   // false with --without-projection: nothing advances the balance projection
  iso: IsoLink;
  log: (line: string) => void;
  /** false in the soak: its fault schedule kills `serve`, the workload's steps do not. */
  kills: boolean;
}

const codec: Codec = { dictionary: iso87AsciiDictionary, framing: defaultFraming, frameBytesMax: limits.iso8583.frameBytesMax };

/** The scheme's TCP connection to the service's ISO 8583 endpoint; reopened after a restart. */
export class IsoLink {
  private client: SchemeClient | undefined;
  private connectedToStart = -1;

  constructor(private readonly service: ServiceProcess) {}

  /** Sends and waits for the response; a closed socket or no answer is `undefined` (outcome unknown). */
  async request(message: Message): Promise<Message | undefined> {
    try {
      const client = await this.connected();
      const closed = client.closed.then(() => undefined);
      return await Promise.race([client.request(message, simBounds.isoResponseTimeoutMs), closed]);
    } catch {
      return undefined;
    }
  }

  /**
   * Answers that arrived without a waiting request (SchemeClient keeps them by MTI, STAN and
   * terminal): the evidence when a request went unanswered. Read through a cast: the simulator
   * keeps them private, and this is a diagnostic only.
   */
  strayAnswers(): string[] {
    const early = (this.client as unknown as { early?: Map<string, Message[]> } | undefined)?.early;
    return early ? [...early].flatMap(([key, messages]) => messages.map(() => key)) : [];
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) await client.close().catch(() => undefined);
  }

  private connecting: Promise<SchemeClient> | undefined;

  /**
   * One connection per service start, opened once however many requests of a burst ask for it at
   * the same moment (a peer may hold only 8 connections: docs/decisions/0022), and signed on: the
   * endpoint decides financial messages only on a signed-on link.
   */
  private connected(): Promise<SchemeClient> {
    if (this.connecting && this.connectedToStart === this.service.starts) return this.connecting;
    this.connectedToStart = this.service.starts;
    this.connecting = (async () => {
      await this.close();
      const client = await SchemeClient.connect("127.0.0.1", this.service.iso8583Port, codec);
      const signOn = await client.request(networkRequest("001", 1), simBounds.isoResponseTimeoutMs);
      if (signOn.fields[39] !== "00") throw new Error(`sign-on answered ${String(signOn.fields[39])}`);
      this.client = client;
      return client;
    })();
    // A failed connection is tried again by the next request, not remembered.
    this.connecting.catch(() => { this.connecting = undefined; });
    return this.connecting;
  }
}
