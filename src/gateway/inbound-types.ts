import type { CardKeys } from "../cards/card-key.ts";
import type { Pool } from "../db/pool.ts";
import type { Message } from "../protocols/iso8583/index.ts";
import type { PendingOriginal } from "./decide-originals.ts";

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
