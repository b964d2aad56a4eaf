import { assert } from "../assert.ts";
import { limits } from "../config/limits.ts";
import type { Pool } from "../db/pool.ts";
import { withTransaction, type Tx } from "../db/transaction.ts";
import type { Finding } from "../errors/finding.ts";
import type { ReceivedRecord } from "../normalize/received-record.ts";
import type { PartnerAccounts } from "../normalize/posting-rules.ts";
import { recordReturnEntries, type ReturnEntryDraft } from "../partners/returns/return-store.ts";
import { returnReasonFor } from "../protocols/ach/return-reasons.ts";
import {
  decideRecords, lockTenantIngestion, recordOutcomeOf, recordOutcomes, zeroCounts, type Decision,
  type OutcomeCounts,
} from "../records/index.ts";
import { ingestRecords } from "../observability/metrics-ingest.ts";
import { ingestFaultPoint, type IngestFaultPoint } from "./fault-points.ts";
import type { Partner } from "../partners/partners.ts";

export { zeroCounts, type OutcomeCounts, type RecordOutcome as Outcome } from "../records/index.ts";

export interface ChunkContext {
  tenantId: string;
  fileId: string;
  partner: Partner;
  /** The partner's accounts per currency; opened (and committed) before the chunk runs. */
  accounts: Map<string, PartnerAccounts>;
  suspectWindowHours: number;
  /**
   * Whether the next chunk probably repeats keys claimed before: set after each chunk from its
   * counts (a re-upload repeats them all), so the record core reads its keys before claiming
   * (docs/decisions/0046). A hint only: the answers are the same either way.
   */
  repeatsExpected: boolean;
}

export type ChunkResult = { kind: "committed"; counts: OutcomeCounts } | { kind: "fenced" };

/**
 * Applies one chunk of a file's records in ONE transaction: the record core decides and posts
 * them (src/records), then the file's own bookkeeping follows: the entries to return to the
 * partner, the file's findings, its progress and counts. A crash at any point rolls the whole
 * chunk back; the file resumes at this chunk.
 *
 * `chunkStart` is the progress this chunk expects to find: if the file moved on (another worker
 * resumed it), the chunk is fenced off and nothing is written.
 */
export async function commitChunk(
  pool: Pool, context: ChunkContext, items: readonly ReceivedRecord[], chunkStart: number,
): Promise<ChunkResult> {
  const result = await inChunkTransaction(pool, context, { chunkStart, records: items.length }, async (tx) => {
    const decisions = await decideRecords(tx, {
      tenantId: context.tenantId, suspectWindowHours: context.suspectWindowHours, repeatsExpected: context.repeatsExpected,
      arrival: { kind: "file", fileId: context.fileId, partnerId: context.partner.partnerId, accounts: context.accounts },
      faultPoint: (name) => ingestFaultPoint(`ingest_chunk_${name}` as IngestFaultPoint),
    }, items);
    await recordReturnEntries(tx, returnsOf(context, decisions));
    await addKeyReuseFindings(tx, context, decisions);
    await countRepeatsDecided(tx, context, decisions);
    const counts = zeroCounts();
    for (const decision of decisions) counts[recordOutcomeOf(decision.outcome)]++;
    return counts;
  });
  assert(result.kind !== "undecided", "the record core decides every record of a chunk");
  return result;
}

/** Thrown inside a chunk's transaction to roll it back when its records were not all decided. */
const undecidedChunk = Symbol("undecided chunk");

/**
 * The frame of every chunk transaction: the tenant's ingestion lock, the file's row locked and its
 * progress checked against `chunkStart` (fenced off if another worker moved it on), then `decide`,
 * then the file's progress and counts advanced by what it decided. `decide` may answer undefined:
 * it could not decide every record this way, and the transaction is rolled back (`undecided`).
 */
export async function inChunkTransaction(
  pool: Pool, context: Pick<ChunkContext, "tenantId" | "fileId">, chunk: { chunkStart: number; records: number },
  decide: (tx: Tx) => Promise<OutcomeCounts | undefined>,
): Promise<ChunkResult | { kind: "undecided" }> {
  try {
    return await withTransaction(pool, async (tx) => {
      await lockTenantIngestion(tx, context.tenantId);
      const file = await tx.query<{ records_done: number; status: string }>(
        `SELECT records_done, status FROM received_file WHERE tenant_id = $1 AND file_id = $2
           FOR UPDATE`, [context.tenantId, context.fileId]);
      const row = file.rows[0];
      if (!row || row.status !== "processing" || row.records_done !== chunk.chunkStart) return { kind: "fenced" } as const;
      const counts = await decide(tx);
      if (!counts) throw undecidedChunk;
      assert(outcomeTotal(counts) === chunk.records, `a chunk of ${chunk.records} records has as many outcomes`);
      await tx.query(
        `UPDATE received_file SET records_done = $3, applied = applied + $4,
           duplicate = duplicate + $5, conflict = conflict + $6,
                suspect = suspect + $7, rejected = rejected + $8, orphan = orphan + $9, updated_at = now()
          WHERE tenant_id = $1 AND file_id = $2`,
        [context.tenantId, context.fileId, chunk.chunkStart + chunk.records, counts.applied, counts.duplicate, counts.conflict, counts.suspect, counts.rejected, counts.orphan],
      );
      return { kind: "committed", counts } as const;
    });
  } catch (error) {
    if (error === undecidedChunk) return { kind: "undecided" };
    throw error;
  }
}

/** A committed chunk's records by outcome, on the records counter of its channel. */
export function countChunkRecords(channel: string, counts: OutcomeCounts): void {
  for (const outcome of recordOutcomes) if (counts[outcome] > 0) ingestRecords.inc({ channel, outcome }, counts[outcome]);
}

function outcomeTotal(counts: OutcomeCounts): number {
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}

/**
 * ACH entries refused at posting for a reason the NACHA return table names (an incoming debit the
 * customer cannot cover: R01): recorded with the refusal, to go back in the partner's next return file.
 */
function returnsOf(context: ChunkContext, decisions: readonly Decision[]): ReturnEntryDraft[] {
  const drafts: ReturnEntryDraft[] = [];
  for (const decision of decisions) {
    const { record, outcome } = decision;
    const reasonCode = outcome.kind === "rejected" ? returnReasonFor(outcome.code) : undefined;
    const line = /^line (\d+)$/.exec(decision.item.position)?.[1];
    if (!record || record.channel !== "ach" || reasonCode === undefined || line === undefined) continue;
    drafts.push({ tenantId: context.tenantId, naturalKey: record.naturalKey, partnerId: context.partner.partnerId, fileId: context.fileId, line: Number(line), reasonCode });
  }
  return drafts;
}

/**
 * The file's records that repeat a version a person already decided on (docs/decisions/0099),
 * counted with the chunk: its report says how many. A statement only for a chunk that has some.
 */
async function countRepeatsDecided(
  tx: Tx, context: ChunkContext, decisions: readonly Decision[],
): Promise<void> {
  const repeats = decisions.filter((d) => d.outcome.code === "RECORD_VERSION_DECIDED").length;
  if (repeats === 0) return;
  await tx.query(
    `UPDATE received_file SET repeats_decided = repeats_decided + $3
      WHERE tenant_id = $1 AND file_id = $2`,
    [context.tenantId, context.fileId, repeats]);
}

/** One file-level warning per record held because another record of the file has its key: the report shows them with the file. */
async function addKeyReuseFindings(tx: Tx, context: ChunkContext, decisions: readonly Decision[]): Promise<void> {
  const held = decisions.filter((d) => d.outcome.code === "RECORD_KEY_REUSED_IN_FILE"
    && d.record !== undefined);
  if (held.length === 0) return;
  const findings: Finding[] = held.map((d) => ({
    code: "RECORD_KEY_REUSED_IN_FILE", severity: "warning",
    message: `${d.item.position}: natural key ${d.record?.naturalKey ?? ""}: `
      + `${d.outcome.detail ?? ""}`,
    position: /^line \d+$/.test(d.item.position) ? { line: Number(d.item.position.slice(5)) } : { xmlPath: d.item.position },
  }));
  await tx.query(
    `UPDATE received_file SET findings = findings || (SELECT coalesce(jsonb_agg(f), '[]'::jsonb)
       FROM (
       SELECT f FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS e(f, n) WHERE n <= $4 - jsonb_array_length(findings)) AS kept)
      WHERE tenant_id = $1 AND file_id = $2`,
    [context.tenantId, context.fileId, JSON.stringify(findings), limits.ingest.findingsMax],
  );
}
