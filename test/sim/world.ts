import type { Message } from "../../src/protocols/iso8583/index.ts";
import type { AchFileModel } from "../../src/protocols/ach/writer.ts";

/**
 * What the simulated clients know: what they sent, what they were told (acknowledged, declined,
 * or unknown because the answer never came), and which dedup decisions they saw. The invariants
 * hold the database to these promises. Identifiers are derived from the seed and counters, never
 * from the clock or a random source, so a seed names the same requests on every run.
 */
export type Told = "applied" | "declined" | "refused" | "unknown";

export interface PaymentIntent {
  clientReference: string;
  idempotencyKey: string;
  body: Record<string, string>;
  told: Told;                     // the best answer any attempt got: applied beats unknown
  paymentId?: string;
}

export interface RefundIntent {
  clientReference: string;
  idempotencyKey: string;
  body: Record<string, string>;
  told: Told;
}

export interface SimAchEntry {
  trace: string;                  // 15 digits: ODFI (8) + sequence (7)
  transactionCode: "22" | "27";   // checking credit / debit
  rdfi: string;                   // 8 digits
  account: string;                // DFI account number
  amountMinor: number;
}

export interface SimFile {
  name: string;
  idempotencyKey: string;
  model: AchFileModel;
  bytes: Buffer;
  entries: SimAchEntry[];
  correctionOf?: string;          // the name of the file this one corrects
  reportedApplied?: string[];     // natural keys the file report said were applied (when it answered)
  fileId?: string;
  told: Told;
}

export interface IsoOriginal {
  message: Message;
  naturalKey: string;
  effectKey: string;              // <natural key>:hold (0100) or :posting (0200)
  responseCode?: string;          // DE 39 of the first answer
  accountId: string;              // the card's account
  amountMinor: number;
}

export interface IsoReversal {
  message: Message;
  original: IsoOriginal;
  acknowledged: boolean;          // a 0410 with 00 was received
}

export interface World {
  seed: number;
  tenantId: string;
  tenantName: string;
  apiKey: string;
  settlement: string;
  merchant: string;
  customers: string[];
  cards: Array<{ pan: string; accountId: string }>;
  partnerName: string;
  aliases: Array<{ rdfi: string; account: string; accountId: string }>;
  counters: { key: number; payment: number; refund: number; file: number; trace: number; stan: number };
  payments: PaymentIntent[];
  refunds: RefundIntent[];
  files: SimFile[];
  isoOriginals: IsoOriginal[];
  isoReversals: IsoReversal[];
  /** Card requests sent to a running service that got no answer matching them (by MTI, STAN and terminal). */
  isoUnanswered: Array<{ mti: string; stan: string; naturalKey: string; step: number; strays: string[] }>;
  step: number;
  /** endpoint|Idempotency-Key of every request answered from inside its transaction: each must have its completed idempotency record. */
  answeredKeys: Set<string>;
  /** channel|dedup key|reason -> how many such decisions the clients saw answered. */
  dedupSeen: Map<string, number>;
  /** Per review natural key: decisions that legitimately add a posting (apply-as-new). */
  applyAsNewByKey: Map<string, number>;
  actionsByKind: Record<string, number>;
  /** Faults the run is injecting now (a kill and its restart, a partition until it healed): inside one, a 5xx or no answer is allowed. */
  faultWindowsOpen: number;
  /** Counts every window opened, so a request that overlapped a window that closed before its answer is known to have. */
  faultWindowsOpened: number;
  /** Promises of progress broken during actions (a 5xx outside a fault window, a step that should have succeeded): checked with the rest. */
  progressBroken: Array<{ invariant: string; subject: string; expected: string; found: string }>;
  /** What the run covered: cases by kind (docs/sim.md, "Coverage"). */
  coverage: Record<string, number>;
  /** Told of every request's result (the soak counts answers by kind per fault); unset in the sim. */
  observe?: (channel: "http" | "iso8583", result: string, span: { openAtStart: boolean; openedBefore: number }) => void;
}

export function newWorld(seed: number): World {
  return {
    seed, tenantId: "", tenantName: `sim-${seed}`, apiKey: "", settlement: "settlement", merchant: "merchant",
    customers: [], cards: [], partnerName: "clearing", aliases: [],
    counters: { key: 0, payment: 0, refund: 0, file: 0, trace: 0, stan: 0 },
    payments: [], refunds: [], files: [], isoOriginals: [], isoReversals: [],
    isoUnanswered: [], step: 0, answeredKeys: new Set(), dedupSeen: new Map(), applyAsNewByKey: new Map(), actionsByKind: {},
    faultWindowsOpen: 0, faultWindowsOpened: 0, progressBroken: [], coverage: {},
  };
}

export function nextIdempotencyKey(world: World): string {
  return `sim-${world.seed}-key-${++world.counters.key}`;
}

export function sawDedup(world: World, channel: string, dedupKey: string, reason: string): void {
  const key = `${channel}|${dedupKey}|${reason}`;
  world.dedupSeen.set(key, (world.dedupSeen.get(key) ?? 0) + 1);
}

/** An answer replaces an unknown; an unknown never replaces an answer. */
export function better(previous: Told, next: Told): Told {
  return next === "unknown" ? previous : previous === "unknown" ? next : previous;
}
