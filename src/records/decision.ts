import type { DedupChannel } from "../dedup/dedup-event.ts";
import type { Transfer } from "../ledger/transfer.ts";
import type { CanonicalRecord } from "../normalize/canonical-record.ts";
import type { IngestRecord } from "../normalize/ingest-record.ts";
import type { PartnerAccounts, PostingRule } from "../normalize/posting-rules.ts";
import type { RecordOutcome } from "./record-states.ts";

/**
 * How a batch of records arrived. The core does not ask which channel: it asks whether the
 * records are lines of a file (outcome rows, review items, the file's own records relate to each
 * other) or one request or message answered to its sender (a conflict is refused to the caller,
 * not held for a person: the caller is there to be told).
 */
export type Arrival = FileArrival | RequestArrival;

export interface FileArrival {
  kind: "file";
  fileId: string;
  partnerId: string;
  /** The partner's accounts per currency; opened (and committed) before the chunk runs. */
  accounts: ReadonlyMap<string, PartnerAccounts>;
}

export interface RequestArrival {
  kind: "request";
  channel: DedupChannel;
  scope: string;            // the endpoint or connection, as dedup_event.scope
  /**
   * The caller records this arrival's repeats itself, in the same transaction and in its channel's
   * words (an ISO 8583 reversal: `reversal-of:<original>`, repeat / retransmission; decision 0039).
   */
  callerRecordsRepeats?: true;
}

export interface RecordContext {
  tenantId: string;
  arrival: Arrival;
  /** A new key whose content equals a record applied from another file this recently is suspect. */
  suspectWindowHours: number;
  /**
   * A hint that most keys of this batch were claimed before (a re-uploaded file): the core reads
   * them before claiming (decision 0046). It changes which statements run, never an answer.
   */
  repeatsExpected?: boolean;
  /** Crash points between stages, for the kill tests; a no-op in production. */
  faultPoint?: (name: string) => void;
}

/** A held record: why, what it collided with, and whether it is one of a file's own twins. */
export interface HoldForReview {
  reason: "conflict" | "suspect";
  matchedRef?: string;
  inFile?: true;
}

/** One record's decision, filled in by the stages in order; `outcome` set means decided. */
export interface Decision {
  item: IngestRecord;
  record?: CanonicalRecord;
  rule?: PostingRule;
  outcome?: RecordOutcome;
  code?: string;
  field?: string;
  detail?: string;
  originalRef?: string;
  transferKey?: string;
  transfer?: Transfer;
  counterparty?: string;      // the ledger account a post rule's counterparty leg resolved to
  identityKey?: string;       // the payment identity the record carries across channels
  identityClaimed?: true;     // this record claimed it first
  review?: HoldForReview;
  linkNotes?: string[];       // a return linked to its forward despite these disagreements (warnings)
  legOf?: string;             // a later leg (or another channel's arrival) of this payment: recorded, not posted
  undoableMinor?: bigint;     // an undo refused for exceeding its original: what of the original remains to undo
}

/** A record the stages work on: it has a canonical record and a posting rule. */
export type Candidate = Decision & { record: CanonicalRecord; rule: PostingRule };

export function isCandidate(decision: Decision): decision is Candidate {
  return decision.record !== undefined && decision.rule !== undefined;
}

/** Candidates that still need a decision. */
export function undecided(decisions: readonly Decision[]): Candidate[] {
  return decisions.filter((d): d is Candidate => isCandidate(d) && d.outcome === undefined);
}

export function decide(decision: Decision, outcome: RecordOutcome, code: string, detail?: string): void {
  decision.outcome = outcome;
  decision.code = code;
  if (detail !== undefined) decision.detail = detail;
}

/** The file an arrival belongs to, or null for a request. */
export function fileIdOf(context: RecordContext): string | null {
  return context.arrival.kind === "file" ? context.arrival.fileId : null;
}
