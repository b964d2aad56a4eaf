import type { CardKeys } from "./card-key.ts";
import type { Pool } from "../db/pool.ts";
import type { Message } from "../protocols/iso8583/index.ts";
import type { CardOriginal } from "../normalize/from-iso8583.ts";

/** What the issuer side's handlers share: their dependencies, the connection a message came on, and what they answer. */
export interface InboundDependencies {
  pool: Pool;
  keys: CardKeys;
  /** The endpoint's batching writer of originals (group commit, decision 0045); without it each original runs alone. */
  originalsWriter?: { submit(original: PendingOriginal): Promise<InboundResult> };
}

export interface InboundContext {
  connection: string;   // which scheme connection, for dedup_event scope and rows
}

/** What happened, for the log line: identifiers and the decision only, never card data. */
export interface InboundResult {
  response: Message | undefined;
  decision: string;
  tenantId?: string;
  naturalKey?: string;
}

/**
 * One original to decide: the message as received (the answer echoes it), its tenant (by BIN) and
 * everything it says, read and checked. Which account its card names is read with its batch.
 */
export interface PendingOriginal {
  message: Message;
  original: Omit<CardOriginal, "account">;
  naturalKey: string;
}
