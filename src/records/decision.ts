import { assert } from "../assert.ts";
import type { Channel } from "../normalize/canonical-record.ts";
import type { ErrorCode } from "../errors/catalog.ts";
import type { Transfer } from "../ledger/index.ts";
import type { CanonicalRecord } from "../normalize/canonical-record.ts";
import type { ReceivedRecord } from "../normalize/received-record.ts";
import type { PartnerAccounts, PostingRule } from "../normalize/posting-rules.ts";
import type { RecordOutcome, ReviewReason } from "./record-states.ts";

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
  channel: Channel;
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

/** A record the stages decide: what it is, read-only, built once by the first stage. */
export interface Candidate {
  readonly item: ReceivedRecord;
  readonly record: CanonicalRecord;
  readonly rule: PostingRule;
  /** The payment identity the record carries across channels (cross-channel key rules). */
  readonly identityKey?: string;
}

/** Codes of the error catalog: a code the catalog does not hold does not compile. */
type Codes<T extends ErrorCode> = T;

/** The review reason of a held outcome: a late return is a suspect of its own reason (0094). */
export function reviewReasonOf(outcome: Conflict | Suspect): ReviewReason {
  return outcome.code === "RECORD_RETURN_LATE" ? "late_return" : outcome.kind;
}

/** A held record's review item: what it collided with. */
export interface Review {
  readonly matchedRef: string;
  /** One of a file's own records sharing a key: each such record is a review item of its own. */
  readonly inFile?: true;
}

/** Posted, or recorded (a record rule, a zero amount, a return with nothing to reverse). */
export interface Applied {
  readonly kind: "applied";
  readonly transfer?: Transfer;         // what it posted (its key is the outcome's transfer key)
  readonly code?: Codes<"RECORD_COUNTERPARTY_UNRESOLVED" | "RECORD_RETURN_LINK_WARNING"
    | "RECORD_NOTHING_TO_REVERSE" | "RECORD_POSTED_FROM_SUSPENSE">;
  readonly detail?: string;
  readonly originalRef?: string;        // the original a return or undo undid
}

/** Its key (or its transfer's) was applied before with the same content: nothing posted. */
export interface Duplicate {
  readonly kind: "duplicate";
  readonly code: Codes<"RECORD_DUPLICATE" | "RECORD_VERSION_DECIDED">;
  readonly originalRef: string;
  readonly detail?: string;
}

/** Its key was seen with other content: held for a person (`review`), or refused to its sender. */
export interface Conflict {
  readonly kind: "conflict";
  readonly code: Codes<"RECORD_CONFLICT" | "RECORD_IDENTITY_CONFLICT"
    | "RECORD_ORIGINAL_ALREADY_REVERSED">;
  readonly detail: string;
  readonly originalRef: string;
  readonly review?: Review;             // absent: a request's conflict no person is asked about
}

/** A new key that looks like a record seen before: held for a person. */
export interface Suspect {
  readonly kind: "suspect";
  readonly code: Codes<"RECORD_SUSPECT" | "RECORD_UETR_REUSED"
    | "RECORD_KEY_REUSED_IN_FILE" | "RECORD_RETURN_LATE">;
  readonly detail: string;
  readonly originalRef: string;
  readonly review: Review;
}

/**
 * Another arrival of a payment already applied: a later leg (UETR rules; stored `applied`) or the
 * same payment through another channel (stored `duplicate`). Recorded and linked, never posted.
 */
export interface Linked {
  readonly kind: "linked";
  readonly code: Codes<"RECORD_PAYMENT_LEG_LINKED" | "RECORD_SAME_PAYMENT">;
  readonly detail: string;
  readonly originalRef: string;
  readonly legOf: string;               // the natural key of the arrival it is linked to
}

/** Invalid input, or refused by the ledger for funds. */
export interface Rejected {
  readonly kind: "rejected";
  readonly code: ErrorCode;
  readonly detail: string;
  readonly field?: string;
  readonly originalRef?: string;        // a return or undo refused for funds: its original
  readonly undoableMinor?: bigint;      // RECORD_UNDO_EXCEEDS_ORIGINAL: what remains to undo
}

/** A return or reversal whose original is unknown: recorded, nothing posted. */
export interface Orphan {
  readonly kind: "orphan";
  readonly code: Codes<"RECORD_ORPHAN" | "RECORD_RETURN_AMOUNT_MISMATCH">;
  readonly detail: string;
}

/** What one record came to, written once (docs/decisions/0058). */
export type Outcome = Applied | Duplicate | Conflict | Suspect | Linked | Rejected | Orphan;

/** One record and its outcome, as the core answers its caller. */
export interface Decision {
  readonly item: ReceivedRecord;
  readonly record?: CanonicalRecord;   // absent when the reader rejected the record
  readonly outcome: Outcome;
}

/** What a stage decided: each record it decided, with its outcome. */
export type Decided = Map<Candidate, Outcome>;

/** The outcomes the stages wrote so far, to read: a record without one is still undecided. */
export interface OutcomesSoFar {
  of(candidate: Candidate): Outcome | undefined;
}

/**
 * The outcome of each record of a batch, written once: the stages return what they decided and
 * the core writes it here. A second outcome for one record is a broken invariant.
 */
export class Outcomes implements OutcomesSoFar {
  private readonly written = new Map<Candidate, Outcome>();

  write(decided: ReadonlyMap<Candidate, Outcome>): void {
    for (const [candidate, outcome] of decided) {
      assert(!this.written.has(candidate), `record ${candidate.item.index} is decided once`);
      this.written.set(candidate, outcome);
    }
  }

  of(candidate: Candidate): Outcome | undefined {
    return this.written.get(candidate);
  }

  /** The candidates of `among` that have no outcome yet, in `among`'s order. */
  undecided(among: Iterable<Candidate>): Candidate[] {
    return [...among].filter((candidate) => !this.written.has(candidate));
  }
}

/** The stored outcome (record_outcome.outcome, the counts): a link is applied or a duplicate. */
export function recordOutcomeOf(outcome: Outcome): RecordOutcome {
  if (outcome.kind !== "linked") return outcome.kind;
  return outcome.code === "RECORD_SAME_PAYMENT" ? "duplicate" : "applied";
}

/** The original an outcome names (a posting, a key, or `<file>#<record>`), if any. */
export function originalRefOf(outcome: Outcome): string | undefined {
  return outcome.kind === "orphan" ? undefined : outcome.originalRef;
}

/** The transfer key of what an applied record posted, else null. */
export function appliedTransferKeyOf(outcome: Outcome): string | null {
  return outcome.kind === "applied" ? (outcome.transfer?.transferKey ?? null) : null;
}

/** The file an arrival belongs to, or null for a request. */
export function fileIdOf(context: RecordContext): string | null {
  return context.arrival.kind === "file" ? context.arrival.fileId : null;
}
