import { createHash } from "node:crypto";
import { assert } from "../assert.ts";
import { limits } from "../config/limits.ts";
import type { Pool, Queryable } from "../db/pool.ts";
import { withTransaction, type Tx } from "../db/transaction.ts";
import { recordDedupEvents, type DedupChannel, type DedupEvent } from "../dedup/dedup-event.ts";
import type { Finding, Result } from "../errors/finding.ts";
import type { PostOutcome } from "../ledger/post-outcome.ts";
import { postTransfers } from "../ledger/post-transfers.ts";
import type { Direction, Transfer } from "../ledger/transfer.ts";
import type { CanonicalRecord } from "../normalize/canonical-record.ts";
import type { IngestRecord } from "../normalize/ingest-record.ts";
import { achFileCreationOfKey } from "../normalize/from-ach.ts";
import { postingRuleFor, reversalFor, transferFor, transferKeyOf, type PartnerAccounts, type PostingRule } from "../normalize/posting-rules.ts";
import { enqueueEvents } from "../outbox/outbox-store.ts";
import { ingestFaultPoint } from "../files/fault-points.ts";
import { describePayment, relateByUetr, uetrRules, type PaymentContent } from "../normalize/uetr-rules.ts";
import { resolveAliases, type Partner } from "../partners/partners.ts";
import { recordReturnEntries, type ReturnEntryDraft } from "../partners/returns/return-store.ts";
import { returnReasonFor } from "../protocols/ach/return-reasons.ts";

export const outcomes = ["applied", "duplicate", "conflict", "suspect", "rejected", "orphan"] as const;
export type Outcome = (typeof outcomes)[number];
export type OutcomeCounts = Record<Outcome, number>;

export function zeroCounts(): OutcomeCounts {
  return { applied: 0, duplicate: 0, conflict: 0, suspect: 0, rejected: 0, orphan: 0 };
}

export interface ChunkContext {
  tenantId: string;
  fileId: string;
  partner: Partner;
  /** The partner's accounts per currency; opened (and committed) before the chunk runs. */
  accounts: Map<string, PartnerAccounts>;
  suspectWindowHours: number;
}

/** One record's decision inside a chunk, before it is written. */
interface Decision {
  item: IngestRecord;
  record?: CanonicalRecord;
  rule?: PostingRule;
  outcome?: Outcome;
  code?: string;
  field?: string;
  detail?: string;
  originalRef?: string;
  transferKey?: string;
  transfer?: Transfer;
  review?: { reason: "conflict" | "suspect"; matchedRef?: string; inFile?: true };
  linkNotes?: string[];     // a return linked to its forward despite these disagreements (warnings)
  legOf?: string;           // a later leg of this payment's first leg (natural key): recorded, not posted
}

interface KeyState {
  naturalKey: string;
  state: "applied" | "held" | "orphan" | "rejected";
  transferKey: string | null;
  matchedKey: string | null;
}

export type ChunkResult = { kind: "committed"; counts: OutcomeCounts } | { kind: "fenced" };

/** The tenant's ingestion lock: chunks of one tenant commit one at a time (docs/decisions/0010). */
export async function lockTenantIngestion(tx: Tx, tenantId: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`clearline.ingest:${tenantId}`]);
}

/**
 * Applies one chunk of a file's records in ONE transaction: insert the natural keys (ON CONFLICT
 * DO NOTHING: the unique index arbitrates), post the transfers of the records that were new,
 * compare the fingerprints of those that were not, match returns with their originals (and
 * orphans with late originals), write one outcome row per record and advance the file's
 * progress. A crash at any point rolls the whole chunk back; the file resumes at this chunk.
 *
 * `chunkStart` is the progress this chunk expects to find: if the file moved on (another worker
 * resumed it), the chunk is fenced off and nothing is written.
 */
export function commitChunk(pool: Pool, context: ChunkContext, items: readonly IngestRecord[], chunkStart: number): Promise<ChunkResult> {
  return withTransaction(pool, async (tx) => {
    await lockTenantIngestion(tx, context.tenantId);
    const file = await tx.query<{ records_done: number; status: string }>(
      "SELECT records_done, status FROM ingest_file WHERE tenant_id = $1 AND file_id = $2 FOR UPDATE", [context.tenantId, context.fileId]);
    const row = file.rows[0];
    if (!row || row.status !== "processing" || row.records_done !== chunkStart) return { kind: "fenced" } as const;

    const decisions = items.map((item) => decide(item));
    const fresh = await insertKeys(tx, context, decisions);
    ingestFaultPoint("ingest_chunk_after_keys");
    await compareRepeats(tx, context, decisions, fresh);
    await relateUetrs(tx, context, decisions, fresh);
    await holdSuspects(tx, context, decisions, fresh);
    await postNewRecords(tx, context, decisions, fresh);
    await updateKeyStates(tx, context.tenantId, keyStatesOf(decisions, fresh));
    const lateStates = await matchReturns(tx, context, decisions, fresh);
    await updateKeyStates(tx, context.tenantId, lateStates);
    ingestFaultPoint("ingest_chunk_after_posting");

    await writeOutcomes(tx, context, decisions);
    await writeReviews(tx, context, decisions);
    await recordReturnEntries(tx, returnsOf(context, decisions));
    await addKeyReuseFindings(tx, context, decisions);
    await recordDedupEvents(tx, dedupEventsOf(context, decisions));
    ingestFaultPoint("ingest_chunk_after_outcomes");

    const counts = zeroCounts();
    for (const decision of decisions) counts[decision.outcome ?? "rejected"]++;
    await tx.query(
      `UPDATE ingest_file SET records_done = $3, applied = applied + $4, duplicate = duplicate + $5, conflict = conflict + $6,
              suspect = suspect + $7, rejected = rejected + $8, orphan = orphan + $9, updated_at = now()
        WHERE tenant_id = $1 AND file_id = $2`,
      [context.tenantId, context.fileId, chunkStart + items.length, counts.applied, counts.duplicate, counts.conflict, counts.suspect, counts.rejected, counts.orphan],
    );
    return { kind: "committed", counts } as const;
  });
}

function decide(item: IngestRecord): Decision {
  if (!item.record) {
    const error = item.rejection;
    const decision: Decision = { item, outcome: "rejected", code: error?.code ?? "INGEST_NO_POSTING_RULE", detail: error?.message ?? "rejected" };
    if (error?.position.field) decision.field = error.position.field;
    return decision;
  }
  const rule = postingRuleFor(item.record);
  if (!rule) return { item, record: item.record, outcome: "rejected", code: "INGEST_NO_POSTING_RULE", detail: `no posting rule for ${item.record.channel} ${item.record.kind}` };
  return { item, record: item.record, rule };
}

/** Records that still need a decision: valid, with a rule. */
function open(decisions: Decision[]): Decision[] {
  return decisions.filter((d) => d.outcome === undefined);
}

/**
 * Inserts the first occurrence of each key in the chunk; the insert's RETURNING tells which keys
 * are new. Keys go in sorted order, so two transactions inserting overlapping keys take their
 * index locks in one order.
 */
async function insertKeys(tx: Tx, context: ChunkContext, decisions: Decision[]): Promise<Set<Decision>> {
  const first = new Map<string, Decision>();
  for (const decision of open(decisions)) {
    const key = (decision.record as CanonicalRecord).naturalKey;
    if (!first.has(key)) first.set(key, decision);
  }
  if (first.size === 0) return new Set();
  const chosen = [...first.values()].sort((a, b) => compareText((a.record as CanonicalRecord).naturalKey, (b.record as CanonicalRecord).naturalKey));
  const column = <T>(pick: (d: Decision, r: CanonicalRecord) => T) => chosen.map((d) => pick(d, d.record as CanonicalRecord));
  const { rows } = await tx.query<{ natural_key: string }>(
    `INSERT INTO ingest_record_key (tenant_id, natural_key, fingerprint, channel, kind, state, file_id, record_index, position,
                                    amount_minor, currency, value_date, transfer_key, link_id1, link_id2, original_ref, original_id1, original_id2)
     SELECT $1, k.natural_key, k.fingerprint, k.channel, k.kind, k.state, $2, k.record_index, k.position,
            k.amount_minor, k.currency, k.value_date::date, k.transfer_key, k.link_id1, k.link_id2, k.original_ref, k.original_id1, k.original_id2
       FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::text[], $10::bigint[], $11::text[], $12::text[],
                   $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[])
            AS k(natural_key, fingerprint, channel, kind, state, record_index, position, amount_minor, currency, value_date,
                 transfer_key, link_id1, link_id2, original_ref, original_id1, original_id2)
     ON CONFLICT (tenant_id, natural_key) DO NOTHING
     RETURNING natural_key`,
    [
      context.tenantId, context.fileId,
      column((_, r) => r.naturalKey), column((_, r) => r.fingerprint), column((_, r) => r.channel), column((_, r) => r.kind),
      column((d) => (d.rule?.action === "reverse-original" ? "orphan" : "applied")),
      column((d) => d.item.index), column((d) => d.item.position), column((_, r) => r.amount.toString()), column((_, r) => r.currency),
      column((_, r) => r.valueDate), column((d, r) => (d.rule?.action === "post" && r.amount > 0n ? transferKeyOf(r.naturalKey) : null)),
      column((d) => d.item.linkIds[0] ?? null), column((d) => d.item.linkIds[1] ?? null),
      column((_, r) => r.original ?? null), column((d) => d.item.originalIds[0] ?? null), column((d) => d.item.originalIds[1] ?? null),
    ],
  );
  const inserted = new Set(rows.map((r) => r.natural_key));
  return new Set(chosen.filter((d) => inserted.has((d.record as CanonicalRecord).naturalKey)));
}

/** Byte order, as PostgreSQL's "C" collation and JavaScript's default sort agree on for ASCII keys. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Keys seen before (in an earlier file, an earlier chunk, or earlier in this chunk): duplicate or
 * conflict. A key first seen in THIS file is no repeat: the originator gave two records of one file
 * one natural key (a trace reused across batches). Both are held for review, never one silently
 * counted a duplicate of the other (docs/decisions/0006).
 */
async function compareRepeats(tx: Tx, context: ChunkContext, decisions: Decision[], fresh: Set<Decision>): Promise<void> {
  const repeats = open(decisions).filter((d) => !fresh.has(d));
  if (repeats.length === 0) return;
  const { rows } = await tx.query<{ natural_key: string; fingerprint: string; transfer_key: string | null; file_id: string; record_index: number; original_name: string | null; identity_key: string | null }>(
    `SELECT k.natural_key, k.fingerprint, k.transfer_key, k.file_id, k.record_index, f.original_name, f.identity_key
       FROM ingest_record_key k LEFT JOIN ingest_file f ON f.tenant_id = k.tenant_id AND f.file_id = k.file_id
      WHERE k.tenant_id = $1 AND k.natural_key = ANY($2::text[])`,
    [context.tenantId, [...new Set(repeats.map((d) => (d.record as CanonicalRecord).naturalKey))]],
  );
  const stored = new Map(rows.map((r) => [r.natural_key, r]));
  const freshByKey = new Map([...fresh].map((d) => [(d.record as CanonicalRecord).naturalKey, d]));
  for (const decision of repeats) {
    const record = decision.record as CanonicalRecord;
    const first = stored.get(record.naturalKey);
    // The insert said the key exists, and dedup marks are never deleted.
    assert(first, `dedup mark ${record.naturalKey} exists after the insert conflicted`);
    if (first.file_id === context.fileId) {
      holdKeyReusedInFile(decision, first.record_index, freshByKey.get(record.naturalKey));
      continue;
    }
    decision.originalRef = first.transfer_key ?? `${first.file_id}#${first.record_index}`;
    if (first.fingerprint === record.fingerprint) {
      decision.outcome = "duplicate";
      decision.code = "INGEST_RECORD_DUPLICATE";
    } else {
      decision.outcome = "conflict";
      decision.code = "INGEST_RECORD_CONFLICT";
      // Names the other file (name, creation time) so an operator can tell a correction from a reused trace.
      const created = achFileCreationOfKey(first.identity_key ?? "");
      decision.detail = `key first seen in ${first.original_name ?? first.file_id} (${first.file_id}${created ? `, created ${created}` : ""}) record ${first.record_index} with other content`;
      decision.review = { reason: "conflict", matchedRef: decision.originalRef };
    }
  }
  await answerDecidedConflicts(tx, context, repeats.filter((d) => d.outcome === "conflict"));
}

/**
 * A changed record that a person already posted as a separate payment (review apply-as-new, or
 * release before it went away) is that payment arriving again: a duplicate of it, not a new
 * conflict. (A replaced record needs nothing here: the replace gave its key the new content.)
 */
async function answerDecidedConflicts(tx: Tx, context: ChunkContext, conflicts: Decision[]): Promise<void> {
  if (conflicts.length === 0) return;
  const reviewIds = conflicts.map((d) => reviewIdOf((d.record as CanonicalRecord).naturalKey, (d.record as CanonicalRecord).fingerprint));
  const { rows } = await tx.query<{ review_id: string; transfer_key: string | null }>(
    "SELECT review_id, transfer_key FROM ingest_review WHERE tenant_id = $1 AND review_id = ANY($2::text[]) AND state IN ('applied_as_new', 'released')",
    [context.tenantId, reviewIds]);
  const posted = new Map(rows.map((r) => [r.review_id, r.transfer_key]));
  for (const [index, decision] of conflicts.entries()) {
    const reviewId = reviewIds[index] as string;
    if (!posted.has(reviewId)) continue;
    decision.outcome = "duplicate";
    decision.code = "INGEST_RECORD_DUPLICATE";
    decision.detail = `applied as a separate payment by review ${reviewId}`;
    decision.originalRef = posted.get(reviewId) ?? `review:${reviewId}`;
    delete decision.review;
  }
}

/** Two records of one file under one natural key: the later one held, and the first too while it is still in this chunk (not yet posted). */
function holdKeyReusedInFile(later: Decision, firstIndex: number, first: Decision | undefined): void {
  const naturalKey = (later.record as CanonicalRecord).naturalKey;
  const stillOpen = first !== undefined && (first.outcome === undefined || first.code === "INGEST_KEY_REUSED_IN_FILE");
  later.outcome = "suspect";
  later.code = "INGEST_KEY_REUSED_IN_FILE";
  later.detail = `record ${firstIndex} of this file has the same natural key (the originator reused a trace): ${stillOpen ? "both held for review" : "that one was applied in an earlier chunk; this one is held for review"}`;
  later.review = { reason: "suspect", matchedRef: naturalKey, inFile: true };
  if (!stillOpen) return;
  first.outcome = "suspect";
  first.code = "INGEST_KEY_REUSED_IN_FILE";
  first.detail = `record ${later.item.index} of this file has the same natural key (the originator reused a trace): both held for review`;
  first.review = { reason: "suspect", matchedRef: naturalKey, inFile: true };
}

interface UetrRow {
  natural_key: string;
  link_id1: string;
  link_id2: string | null;
  amount_minor: bigint;
  currency: string;
  transfer_key: string | null;
}

function uetrOf(decision: Decision): string | undefined {
  const first = decision.item.linkIds[0];
  return first?.startsWith("uetr:") ? first : undefined;
}

function contentOfDecision(decision: Decision): PaymentContent {
  const record = decision.record as CanonicalRecord;
  return { naturalKey: record.naturalKey, endToEndId: record.attributes.endToEndId, amountMinor: record.amount, currency: record.currency };
}

function contentOfRow(row: UetrRow): PaymentContent {
  return { naturalKey: row.natural_key, endToEndId: row.link_id2?.startsWith("e2e:") ? row.link_id2.slice(4) : undefined, amountMinor: BigInt(row.amount_minor), currency: row.currency };
}

/**
 * UETR rules (protocols/iso20022/uetr-rules.json): a new record that shares its UETR with a record
 * applied before under another key (other agents) is either a later leg of the same payment, which
 * is recorded and linked to the first leg but not posted again, or a different payment reusing the
 * UETR, which is held as a suspect with a finding naming both. Earlier records of this chunk count.
 */
async function relateUetrs(tx: Tx, context: ChunkContext, decisions: Decision[], fresh: Set<Decision>): Promise<void> {
  const candidates = open(decisions).filter((d) => fresh.has(d) && uetrRules.kinds.includes((d.record as CanonicalRecord).kind) && uetrOf(d) !== undefined);
  if (candidates.length === 0) return;
  const { rows } = await tx.query<UetrRow>(
    `SELECT natural_key, link_id1, link_id2, amount_minor, currency, transfer_key FROM ingest_record_key
      WHERE tenant_id = $1 AND link_id1 = ANY($2::text[]) AND kind = ANY($3::text[]) AND state = 'applied' AND NOT natural_key = ANY($4::text[])
      ORDER BY created_at, natural_key`,
    [context.tenantId, [...new Set(candidates.map((d) => uetrOf(d) as string))], uetrRules.kinds, [...fresh].map((d) => (d.record as CanonicalRecord).naturalKey)],
  );
  const firstByUetr = new Map<string, { content: PaymentContent; ref: string }>();
  for (const row of rows) {
    if (!firstByUetr.has(row.link_id1)) firstByUetr.set(row.link_id1, { content: contentOfRow(row), ref: row.transfer_key ?? row.natural_key });
  }
  for (const decision of candidates) {
    const uetr = uetrOf(decision) as string;
    const content = contentOfDecision(decision);
    const first = firstByUetr.get(uetr);
    if (!first) {
      firstByUetr.set(uetr, { content, ref: transferKeyOf(content.naturalKey) });
      continue;
    }
    const relation = relateByUetr(first.content, content);
    decision.originalRef = first.ref;
    if (relation.kind === "leg") {
      decision.outcome = "applied";
      decision.code = "INGEST_PAYMENT_LEG_LINKED";
      decision.detail = `a later leg of ${describePayment(first.content)}: recorded and linked, not posted again`;
      decision.legOf = first.content.naturalKey;
    } else {
      decision.outcome = "suspect";
      decision.code = "INGEST_UETR_REUSED";
      decision.detail = `${uetr.slice(5)} already names ${describePayment(first.content)}; this record ${describePayment(content)} differs in ${relation.differing.join(", ")}`;
      decision.review = { reason: "suspect", matchedRef: first.content.naturalKey };
    }
  }
}

/**
 * A new key whose economic content (fingerprint) equals a record applied from another file
 * within the window: held for review, as when a corrected file renumbered its traces. Records of
 * the same file never make each other suspect (two payees paid the same in one file are two
 * payments).
 */
async function holdSuspects(tx: Tx, context: ChunkContext, decisions: Decision[], fresh: Set<Decision>): Promise<void> {
  const candidates = [...fresh].filter((d) => d.outcome === undefined && d.rule?.action === "post" && (d.record as CanonicalRecord).amount > 0n);
  if (candidates.length === 0) return;
  const { rows } = await tx.query<{ fingerprint: string; natural_key: string; transfer_key: string | null }>(
    `SELECT DISTINCT ON (fingerprint) fingerprint, natural_key, transfer_key FROM ingest_record_key
      WHERE tenant_id = $1 AND fingerprint = ANY($2::text[]) AND file_id <> $3 AND state = 'applied'
        AND created_at > now() - make_interval(hours => $4)
      ORDER BY fingerprint, created_at`,
    [context.tenantId, candidates.map((d) => (d.record as CanonicalRecord).fingerprint), context.fileId, context.suspectWindowHours],
  );
  const matches = new Map(rows.map((r) => [r.fingerprint, r]));
  for (const decision of candidates) {
    const match = matches.get((decision.record as CanonicalRecord).fingerprint);
    if (!match) continue;
    decision.outcome = "suspect";
    decision.code = "INGEST_RECORD_SUSPECT";
    decision.originalRef = match.transfer_key ?? match.natural_key;
    decision.detail = `same content as ${match.natural_key}, applied from another file`;
    decision.review = { reason: "suspect", matchedRef: match.natural_key };
  }
}

/** New records of "post" and "record" rules: counterparties resolved, transfers posted as one batch. */
async function postNewRecords(tx: Tx, context: ChunkContext, decisions: Decision[], fresh: Set<Decision>): Promise<void> {
  const toPost: Decision[] = [];
  for (const decision of open(decisions)) {
    if (!fresh.has(decision)) continue;
    const record = decision.record as CanonicalRecord;
    if (decision.rule?.action === "record" || (decision.rule?.action === "post" && record.amount === 0n)) {
      decision.outcome = "applied";
      continue;
    }
    if (decision.rule?.action === "post") toPost.push(decision);
  }
  if (toPost.length === 0) return;
  const aliasOf = (d: Decision) => (d.rule?.counterparty ? (d.record as CanonicalRecord).attributes[d.rule.counterparty] : undefined);
  const resolved = await resolveAliases(tx, context.tenantId, toPost.map(aliasOf).filter((a): a is string => a !== undefined));
  for (const decision of toPost) {
    const record = decision.record as CanonicalRecord;
    const alias = aliasOf(decision);
    const account = alias === undefined ? undefined : resolved.get(alias);
    const counterparty = account && account.currency === record.currency ? account.accountId : undefined;
    if (!counterparty) {
      decision.code = "INGEST_COUNTERPARTY_UNRESOLVED";
      decision.detail = alias === undefined ? "the record names no counterparty account" : `no account for ${alias}: posted to the partner's suspense account`;
    }
    decision.transfer = transferFor(record, decision.rule as PostingRule, accountsFor(context, record.currency), counterparty);
  }
  await postAndDecide(tx, toPost);
}

function accountsFor(context: ChunkContext, currency: string): PartnerAccounts {
  const accounts = context.accounts.get(currency);
  assert(accounts, `partner accounts in ${currency} were opened before the chunk`);
  return accounts;
}

/** Posts the decisions' transfers as one batch and turns each ledger outcome into the record's outcome. */
async function postAndDecide(tx: Tx, decisions: Decision[]): Promise<void> {
  const results = await postTransfers(tx, decisions.map((d) => d.transfer as Transfer));
  for (const [index, decision] of decisions.entries()) decideFromPosting(decision, results[index] as Result<PostOutcome, Finding>);
}

function decideFromPosting(decision: Decision, result: Result<PostOutcome, Finding>): void {
  const transfer = decision.transfer as Transfer;
  if (!result.ok) {
    // The only refusal input can cause here: accounts and currencies were checked upstream.
    assert(result.error.code === "LEDGER_INSUFFICIENT_FUNDS", `posting of ${transfer.transferKey} failed: ${result.error.code} ${result.error.message}`);
    decision.outcome = "rejected";
    decision.code = "INGEST_INSUFFICIENT_FUNDS";
    decision.detail = `${result.error.message}: nothing posted; return the entry (R01)`;
    delete decision.transfer;
    return;
  }
  decision.transferKey = transfer.transferKey;
  if (result.value === "applied") {
    decision.outcome = "applied";
  } else if (result.value === "exists") {
    decision.outcome = "duplicate";
    decision.code = "INGEST_RECORD_DUPLICATE";
    decision.originalRef = transfer.transferKey;
  } else {
    decision.outcome = "conflict";
    decision.code = "INGEST_RECORD_CONFLICT";
    decision.detail = `transfer ${transfer.transferKey} ${result.value.replaceAll("_", " ")}`;
    decision.originalRef = transfer.transferKey;
    decision.review = { reason: "conflict", matchedRef: transfer.transferKey };
    delete decision.transferKey;
  }
}

/** Dedup marks whose state is not what the insert assumed. */
function keyStatesOf(decisions: Decision[], fresh: Set<Decision>): KeyState[] {
  const states: KeyState[] = [];
  for (const decision of fresh) {
    const naturalKey = (decision.record as CanonicalRecord).naturalKey;
    if (decision.outcome === "suspect" || (decision.outcome === "conflict" && decision.rule?.action === "post")) {
      states.push({ naturalKey, state: "held", transferKey: null, matchedKey: null });
    } else if (decision.legOf !== undefined) {
      states.push({ naturalKey, state: "applied", transferKey: null, matchedKey: decision.legOf });
    } else if (decision.outcome === "rejected" && decision.rule?.action === "post") {
      states.push({ naturalKey, state: "rejected", transferKey: null, matchedKey: null });
    }
  }
  void decisions;
  return states;
}

async function updateKeyStates(tx: Tx, tenantId: string, states: KeyState[]): Promise<void> {
  if (states.length === 0) return;
  await tx.query(
    `UPDATE ingest_record_key k SET state = s.state, transfer_key = s.transfer_key, matched_key = s.matched_key
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS s(natural_key, state, transfer_key, matched_key)
      WHERE k.tenant_id = $1 AND k.natural_key = s.natural_key`,
    [tenantId, states.map((s) => s.naturalKey), states.map((s) => s.state), states.map((s) => s.transferKey), states.map((s) => s.matchedKey)],
  );
}

interface OriginalRow {
  natural_key: string;
  link_id1: string | null;
  link_id2: string | null;
  amount_minor: bigint;
  currency: string;
  transfer_key: string;
  channel: string;
}

interface OrphanRow {
  natural_key: string;
  fingerprint: string;
  channel: string;
  kind: string;
  file_id: string;
  record_index: number;
  position: string;
  amount_minor: bigint;
  currency: string;
  value_date: string;
  original_ref: string | null;
  original_id1: string | null;
  original_id2: string | null;
}

/** A return's amount confirms a link: equal for ACH (returns are whole); at most the original's for ISO 20022 (partial returns). */
function amountConfirms(channel: string, returned: bigint, original: bigint): boolean {
  return channel === "ach" ? returned === original : returned > 0n && returned <= original;
}

/**
 * Returns of this chunk are matched with their originals (by the key or link they name, else by
 * the fallback ids, confirmed by amount) and post the original's legs reversed; unmatched ones
 * stay orphans. Records applied in this chunk are then offered to the orphans waiting for them.
 * An original is reversed at most once; a second return of it is held for review.
 */
async function matchReturns(tx: Tx, context: ChunkContext, decisions: Decision[], fresh: Set<Decision>): Promise<KeyState[]> {
  const states: KeyState[] = [];
  const returns = [...fresh].filter((d) => d.outcome === undefined && d.rule?.action === "reverse-original");
  const applied = [...fresh].filter((d) => d.outcome === "applied" && d.transfer !== undefined);
  const pending: Array<{ decision?: Decision; orphan?: OrphanRow; original: OriginalRow; transfer?: Transfer }> = [];
  const reversedOriginals = new Set<string>();

  if (returns.length > 0) {
    const refs = returns.map((d) => (d.record as CanonicalRecord).original).filter((r): r is string => r !== undefined);
    const ids = returns.flatMap((d) => d.item.originalIds);
    const { rows } = await tx.query<OriginalRow>(
      `SELECT natural_key, link_id1, link_id2, amount_minor, currency, transfer_key, channel FROM ingest_record_key
        WHERE tenant_id = $1 AND state = 'applied' AND transfer_key IS NOT NULL AND kind NOT IN ('return')
          AND (natural_key = ANY($2::text[]) OR link_id1 = ANY($2::text[]) OR link_id1 = ANY($3::text[]) OR link_id2 = ANY($3::text[]))`,
      [context.tenantId, refs, ids],
    );
    const alreadyReversed = await reversedAlready(tx, context.tenantId, rows.map((r) => r.natural_key));
    for (const decision of returns) {
      const record = decision.record as CanonicalRecord;
      const named = rows.filter((r) => record.original !== undefined && (r.natural_key === record.original || r.link_id1 === record.original));
      const fallback = rows.filter((r) => decision.item.originalIds.some((id) => id === r.link_id1 || id === r.link_id2));
      const candidates = named.length > 0 ? named : fallback;
      const confirmed = candidates.find((r) => r.currency === record.currency && amountConfirms(record.channel, record.amount, r.amount_minor));
      if (!confirmed) {
        decision.outcome = "orphan";
        decision.code = candidates.length > 0 ? "INGEST_RETURN_AMOUNT_MISMATCH" : "INGEST_RECORD_ORPHAN";
        decision.detail = candidates.length > 0 ? `original ${candidates[0]?.natural_key} has another amount` : "no original found; matched when it arrives";
        continue;
      }
      if (alreadyReversed.has(confirmed.natural_key) || reversedOriginals.has(confirmed.natural_key)) {
        decision.outcome = "suspect";
        decision.code = "INGEST_RECORD_SUSPECT";
        decision.detail = `original ${confirmed.natural_key} was already returned`;
        decision.originalRef = confirmed.transfer_key;
        decision.review = { reason: "suspect", matchedRef: confirmed.natural_key };
        states.push({ naturalKey: record.naturalKey, state: "held", transferKey: null, matchedKey: null });
        continue;
      }
      reversedOriginals.add(confirmed.natural_key);
      decision.linkNotes = linkNotesOf(record, named.includes(confirmed), confirmed);
      pending.push({ decision, original: confirmed });
    }
  }

  if (applied.length > 0 && (await hasOrphans(tx, context.tenantId))) {
    const chunkKeys = new Set(decisions.flatMap((d) => (d.record ? [d.record.naturalKey] : [])));
    const refs = applied.flatMap((d) => [(d.record as CanonicalRecord).naturalKey, ...d.item.linkIds]);
    const ids = applied.flatMap((d) => d.item.linkIds);
    const { rows } = await tx.query<OrphanRow>(
      `SELECT natural_key, fingerprint, channel, kind, file_id, record_index, position, amount_minor, currency,
              to_char(value_date, 'YYYY-MM-DD') AS value_date, original_ref, original_id1, original_id2
         FROM ingest_record_key
        WHERE tenant_id = $1 AND state = 'orphan'
          AND (original_ref = ANY($2::text[]) OR original_id1 = ANY($3::text[]) OR original_id2 = ANY($3::text[]))`,
      [context.tenantId, refs, ids],
    );
    for (const orphan of rows) {
      if (chunkKeys.has(orphan.natural_key)) continue;   // this chunk's own returns were matched above
      const named = applied.filter((d) => orphan.original_ref !== null && ((d.record as CanonicalRecord).naturalKey === orphan.original_ref || d.item.linkIds[0] === orphan.original_ref));
      const fallback = applied.filter((d) => d.item.linkIds.some((id) => id === orphan.original_id1 || id === orphan.original_id2));
      const candidates = named.length > 0 ? named : fallback;
      const match = candidates.find((d) => (d.record as CanonicalRecord).currency === orphan.currency && amountConfirms(orphan.channel, orphan.amount_minor, (d.record as CanonicalRecord).amount));
      if (!match) continue;
      const original = match.record as CanonicalRecord;
      if (reversedOriginals.has(original.naturalKey)) continue;
      reversedOriginals.add(original.naturalKey);
      pending.push({ orphan, original: { natural_key: original.naturalKey, link_id1: match.item.linkIds[0] ?? null, link_id2: match.item.linkIds[1] ?? null, amount_minor: original.amount, currency: original.currency, transfer_key: (match.transfer as Transfer).transferKey, channel: original.channel } });
    }
  }
  if (pending.length === 0) return states;

  // The originals' legs: from this chunk's own postings, else from the ledger.
  const legsByTransfer = new Map<string, Array<{ accountId: string; direction: Direction }>>();
  for (const decision of applied) {
    const transfer = decision.transfer as Transfer;
    legsByTransfer.set(transfer.transferKey, transfer.legs.map((l) => ({ accountId: l.accountId, direction: l.direction })));
  }
  const missing = [...new Set(pending.map((p) => p.original.transfer_key).filter((k) => !legsByTransfer.has(k)))];
  if (missing.length > 0) {
    const { rows } = await tx.query<{ transfer_key: string; account_id: string; direction: Direction }>(
      "SELECT transfer_key, account_id, direction FROM ledger_entry WHERE tenant_id = $1 AND transfer_key = ANY($2::text[]) ORDER BY transfer_key, entry_key",
      [context.tenantId, missing],
    );
    for (const row of rows) {
      const legs = legsByTransfer.get(row.transfer_key) ?? [];
      legs.push({ accountId: row.account_id, direction: row.direction });
      legsByTransfer.set(row.transfer_key, legs);
    }
  }
  for (const item of pending) {
    const legs = legsByTransfer.get(item.original.transfer_key);
    assert(legs && legs.length === 2, `original ${item.original.transfer_key} has the two legs its rule posted`);
    const record = item.decision ? (item.decision.record as CanonicalRecord) : orphanRecord(context, item.orphan as OrphanRow);
    item.transfer = reversalFor(record, legs);
  }
  const results = await postTransfers(tx, pending.map((p) => p.transfer as Transfer));
  const orphanUpdates: Array<{ orphan: OrphanRow; original: string }> = [];
  for (const [index, item] of pending.entries()) {
    const result = results[index] as Result<PostOutcome, Finding>;
    const transfer = item.transfer as Transfer;
    if (item.decision) {
      item.decision.transfer = transfer;
      decideFromPosting(item.decision, result);
      item.decision.originalRef = item.original.transfer_key;
      const notes = item.decision.linkNotes ?? [];
      if (item.decision.outcome === "applied" && notes.length > 0) {
        item.decision.code = "INGEST_RETURN_LINK_WARNING";
        item.decision.detail = `linked to ${item.original.natural_key} by original trace and amount although ${notes.join("; ")}`;
      }
      const naturalKey = (item.decision.record as CanonicalRecord).naturalKey;
      if (item.decision.outcome === "applied") states.push({ naturalKey, state: "applied", transferKey: transfer.transferKey, matchedKey: item.original.natural_key });
      else if (item.decision.outcome === "rejected") states.push({ naturalKey, state: "rejected", transferKey: null, matchedKey: null });
      else if (item.decision.outcome === "conflict") states.push({ naturalKey, state: "held", transferKey: null, matchedKey: null });
    } else if (result.ok && result.value === "applied") {
      const orphan = item.orphan as OrphanRow;
      states.push({ naturalKey: orphan.natural_key, state: "applied", transferKey: transfer.transferKey, matchedKey: item.original.natural_key });
      orphanUpdates.push({ orphan, original: item.original.natural_key });
    }
  }
  for (const { orphan, original } of orphanUpdates) {
    await tx.query(
      "UPDATE ingest_outcome SET detail = $4 WHERE tenant_id = $1 AND file_id = $2 AND record_index = $3",
      [context.tenantId, orphan.file_id, orphan.record_index, `matched with ${original} when it arrived in ${context.fileId}; reversal posted`],
    );
  }
  return states;
}

/**
 * Why a return's link to its forward deserves a look although trace and amount confirm it: the
 * addenda's Original DFI names another RDFI (the link came from the trace alone), or the return kept
 * a forward transaction code. Neither stops the link (issue 16); each is a warning on the outcome.
 */
function linkNotesOf(record: CanonicalRecord, namedByOriginalDfi: boolean, original: OriginalRow): string[] {
  const notes: string[] = [];
  if (!namedByOriginalDfi && record.channel === "ach") {
    const forwardRdfi = original.link_id1?.split(":")[2];
    notes.push(`the addenda's Original DFI ${record.attributes.originalReceivingDfiIdentification ?? "(none)"} is not the forward's RDFI ${forwardRdfi ?? "(unknown)"}`);
  }
  if (record.attributes.linkWarning !== undefined) notes.push(record.attributes.linkWarning);
  return notes;
}

/** Whether any return waits for its original: one probe of a small partial index (under the tenant's lock, so it cannot change meanwhile). */
async function hasOrphans(tx: Queryable, tenantId: string): Promise<boolean> {
  const { rows } = await tx.query<{ waiting: boolean }>("SELECT EXISTS (SELECT 1 FROM ingest_record_key WHERE tenant_id = $1 AND state = 'orphan') AS waiting", [tenantId]);
  return rows[0]?.waiting === true;
}

async function reversedAlready(tx: Queryable, tenantId: string, originals: string[]): Promise<Set<string>> {
  if (originals.length === 0) return new Set();
  const { rows } = await tx.query<{ matched_key: string }>(
    "SELECT matched_key FROM ingest_record_key WHERE tenant_id = $1 AND matched_key = ANY($2::text[]) AND state = 'applied'", [tenantId, originals]);
  return new Set(rows.map((r) => r.matched_key));
}

function orphanRecord(context: ChunkContext, orphan: OrphanRow): CanonicalRecord {
  return {
    tenantId: context.tenantId, channel: orphan.channel as CanonicalRecord["channel"], naturalKey: orphan.natural_key, intentId: orphan.natural_key,
    kind: orphan.kind, amount: orphan.amount_minor, currency: orphan.currency, valueDate: orphan.value_date, fingerprint: orphan.fingerprint,
    source: { fileId: orphan.file_id, position: orphan.position }, attributes: {},
  };
}

async function writeOutcomes(tx: Tx, context: ChunkContext, decisions: Decision[]): Promise<void> {
  if (decisions.length === 0) return;
  const column = <T>(pick: (d: Decision) => T) => decisions.map(pick);
  await tx.query(
    `INSERT INTO ingest_outcome (tenant_id, file_id, record_index, position, natural_key, outcome, code, field, detail, kind, amount_minor, currency, original_ref, transfer_key)
     SELECT $1, $2, o.record_index, o.position, o.natural_key, o.outcome, o.code, o.field, o.detail, o.kind, o.amount_minor, o.currency, o.original_ref, o.transfer_key
       FROM unnest($3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::bigint[], $12::text[], $13::text[], $14::text[])
            AS o(record_index, position, natural_key, outcome, code, field, detail, kind, amount_minor, currency, original_ref, transfer_key)
     ON CONFLICT (tenant_id, file_id, record_index) DO NOTHING`,
    [
      context.tenantId, context.fileId,
      column((d) => d.item.index), column((d) => d.item.position), column((d) => d.record?.naturalKey ?? null),
      column((d) => { assert(d.outcome !== undefined, `record ${d.item.index} has an outcome`); return d.outcome; }),
      column((d) => d.code ?? null), column((d) => d.field ?? null), column((d) => d.detail ?? null), column((d) => d.record?.kind ?? null),
      column((d) => d.record?.amount.toString() ?? null), column((d) => d.record?.currency ?? null),
      column((d) => d.originalRef ?? null), column((d) => (d.outcome === "applied" ? (d.transferKey ?? null) : null)),
    ],
  );
}

/**
 * ACH entries refused at posting for a reason the NACHA return table names (an incoming debit the
 * customer cannot cover: R01): recorded with the refusal, to go back in the partner's next return file.
 */
function returnsOf(context: ChunkContext, decisions: Decision[]): ReturnEntryDraft[] {
  const drafts: ReturnEntryDraft[] = [];
  for (const decision of decisions) {
    const record = decision.record;
    const reasonCode = decision.outcome === "rejected" && decision.code !== undefined ? returnReasonFor(decision.code) : undefined;
    const line = /^line (\d+)$/.exec(decision.item.position)?.[1];
    if (!record || record.channel !== "ach" || reasonCode === undefined || line === undefined) continue;
    drafts.push({ tenantId: context.tenantId, naturalKey: record.naturalKey, partnerId: context.partner.partnerId, fileId: context.fileId, line: Number(line), reasonCode });
  }
  return drafts;
}

/** One file-level warning per record held because another record of the file has its key: the report shows them with the file. */
async function addKeyReuseFindings(tx: Tx, context: ChunkContext, decisions: Decision[]): Promise<void> {
  const held = decisions.filter((d) => d.code === "INGEST_KEY_REUSED_IN_FILE" && d.record !== undefined);
  if (held.length === 0) return;
  const findings: Finding[] = held.map((d) => ({
    code: "INGEST_KEY_REUSED_IN_FILE", severity: "warning",
    message: `${d.item.position}: natural key ${(d.record as CanonicalRecord).naturalKey}: ${d.detail ?? ""}`,
    position: /^line \d+$/.test(d.item.position) ? { line: Number(d.item.position.slice(5)) } : { xmlPath: d.item.position },
  }));
  await tx.query(
    `UPDATE ingest_file SET findings = findings || (SELECT coalesce(jsonb_agg(f), '[]'::jsonb) FROM (
       SELECT f FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS e(f, n) WHERE n <= $4 - jsonb_array_length(findings)) AS kept)
      WHERE tenant_id = $1 AND file_id = $2`,
    [context.tenantId, context.fileId, JSON.stringify(findings), limits.ingest.findingsMax],
  );
}

export function reviewIdOf(naturalKey: string, fingerprint: string): string {
  return `rev_${createHash("sha256").update(`${naturalKey}\u0000${fingerprint}`).digest("hex").slice(0, 24)}`;
}

/** The record as kept for a review: enough to post it on release with the same posting rules. */
export interface ReviewRecord {
  record: Omit<CanonicalRecord, "amount"> & { amount: string };
}

async function writeReviews(tx: Tx, context: ChunkContext, decisions: Decision[]): Promise<void> {
  const items = decisions.filter((d) => d.review !== undefined && d.record !== undefined);
  if (items.length === 0) return;
  const column = <T>(pick: (d: Decision, r: CanonicalRecord) => T) => items.map((d) => pick(d, d.record as CanonicalRecord));
  await tx.query(
    `INSERT INTO ingest_review (tenant_id, review_id, reason, natural_key, fingerprint, file_id, record_index, partner_id, record, matched_ref)
     SELECT $1, r.review_id, r.reason, r.natural_key, r.fingerprint, $2, r.record_index, $3, r.record::jsonb, r.matched_ref
       FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::text[], $10::text[])
            AS r(review_id, reason, natural_key, fingerprint, record_index, record, matched_ref)
     ON CONFLICT (tenant_id, review_id) DO NOTHING`,
    [
      context.tenantId, context.fileId, context.partner.partnerId,
      // Records of one file sharing a key (even twins equal in every field) are separate review items.
      column((d, r) => (d.review?.inFile ? reviewIdOf(`${r.naturalKey}#${context.fileId}:${d.item.index}`, r.fingerprint) : reviewIdOf(r.naturalKey, r.fingerprint))),
      column((d) => d.review?.reason), column((_, r) => r.naturalKey),
      column((_, r) => r.fingerprint), column((d) => d.item.index),
      column((_, r) => JSON.stringify({ record: { ...r, amount: r.amount.toString() } } satisfies ReviewRecord)),
      column((d) => d.review?.matchedRef ?? null),
    ],
  );
  // Held for review: told in the same transaction, keyed by the review item (one per key and content).
  await enqueueEvents(tx, items.map((d) => {
    const record = d.record as CanonicalRecord;
    const reviewId = d.review?.inFile ? reviewIdOf(`${record.naturalKey}#${context.fileId}:${d.item.index}`, record.fingerprint) : reviewIdOf(record.naturalKey, record.fingerprint);
    return {
      tenantId: context.tenantId, eventType: `record.${d.review?.reason ?? "held"}`, eventKey: `${reviewId}:held`,
      data: { reviewId, reason: d.review?.reason, naturalKey: record.naturalKey, fileId: context.fileId, recordIndex: d.item.index, matchedRef: d.review?.matchedRef ?? null, amountMinor: record.amount, currency: record.currency },
    };
  }));
}

function dedupEventsOf(context: ChunkContext, decisions: Decision[]): DedupEvent[] {
  const events: DedupEvent[] = [];
  for (const decision of decisions) {
    const record = decision.record;
    const isLeg = decision.legOf !== undefined;
    if (!record || (!isLeg && decision.outcome !== "duplicate" && decision.outcome !== "conflict" && decision.outcome !== "suspect")) continue;
    const event: DedupEvent = {
      tenantId: context.tenantId, channel: record.channel as DedupChannel, scope: context.fileId, dedupKey: record.naturalKey,
      reason: isLeg ? "payment_leg" : (decision.outcome as string), position: `${context.fileId}:${decision.item.position}`,
    };
    if (decision.originalRef !== undefined) event.originalRef = decision.originalRef;
    events.push(event);
  }
  return events;
}
