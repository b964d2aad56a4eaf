import { assert } from "../../assert.ts";
import type { Queryable } from "../../db/pool.ts";
import { achFileCreationOfKey } from "../../normalize/from-ach.ts";
import { decide, fileIdOf, undecided, type Candidate, type Decision, type RecordContext } from "../decision.ts";
import { reviewIdOf } from "../review-id.ts";
import type { ClaimedKeys } from "./claim-keys.ts";
import { selectFileNames, selectKeys, type FileName, type StoredKey } from "../store/keys.ts";
import { selectPostedReviews } from "../store/reviews.ts";

/**
 * Keys seen before (in an earlier file or request, an earlier chunk, or earlier in this chunk):
 * duplicate or conflict. A key first seen in THIS file is no repeat: the originator gave two
 * records of one file one natural key (a trace reused across batches). Both are held for review,
 * never one silently counted a duplicate of the other (docs/decisions/0006).
 */
export async function compareRepeats(tx: Queryable, context: RecordContext, decisions: readonly Decision[], claimed: ClaimedKeys): Promise<void> {
  const fresh = claimed.fresh;
  const repeats = undecided(decisions).filter((d) => !fresh.has(d));
  if (repeats.length === 0) return;
  const stored = await storedKeysOf(tx, context.tenantId, repeats, claimed.stored);
  const freshByKey = new Map([...fresh].map((d) => [d.record.naturalKey, d]));
  const fileId = fileIdOf(context);
  const changed: Array<{ decision: Candidate; first: StoredKey }> = [];
  for (const decision of repeats) {
    const first = stored.get(decision.record.naturalKey);
    // The insert said the key exists, and dedup marks are never deleted.
    assert(first, `dedup mark ${decision.record.naturalKey} exists after the insert conflicted`);
    if (fileId !== null && first.file_id === fileId) {
      holdKeyReusedInFile(decision, fileId, first, freshByKey.get(decision.record.naturalKey));
      continue;
    }
    decision.originalRef = first.transfer_key ?? (first.file_id === null ? first.natural_key : `${first.file_id}#${first.record_index}`);
    if (first.fingerprint === decision.record.fingerprint) decide(decision, "duplicate", "INGEST_RECORD_DUPLICATE");
    else changed.push({ decision, first });
  }
  // Only a conflict's detail names the file its key came in: the names are read for those alone.
  const names = await selectFileNames(tx, context.tenantId, changed.flatMap((c) => (c.first.file_id === null ? [] : [c.first.file_id])));
  for (const { decision, first } of changed) {
    decide(decision, "conflict", "INGEST_RECORD_CONFLICT", `key first seen in ${describeFirst(first, names)} with other content`);
    decision.review = { reason: "conflict", matchedRef: decision.originalRef as string };
  }
  await answerDecidedConflicts(tx, context, changed.map((c) => c.decision));
}

/**
 * The first arrival of each repeat's key: as the claim read it, else read now (a key first claimed
 * by this chunk, or committed by another transaction while the claim waited on it).
 */
async function storedKeysOf(tx: Queryable, tenantId: string, repeats: readonly Candidate[], read: ReadonlyMap<string, StoredKey>): Promise<Map<string, StoredKey>> {
  const stored = new Map(read);
  const missing = repeats.map((d) => d.record.naturalKey).filter((key) => !stored.has(key));
  if (missing.length > 0) for (const [key, row] of await selectKeys(tx, tenantId, missing)) stored.set(key, row);
  return stored;
}

/** Names the first arrival: the file (name, creation time) and record, so an operator can tell a correction from a reused trace; or the request. */
function describeFirst(first: StoredKey, names: ReadonlyMap<string, FileName>): string {
  if (first.file_id === null) return first.position;
  const file = names.get(first.file_id);
  const created = achFileCreationOfKey(file?.identity_key ?? "");
  return `${file?.original_name ?? first.file_id} (${first.file_id}${created ? `, created ${created}` : ""}) record ${first.record_index}`;
}

/**
 * A changed record that a person already posted as a separate payment (review apply-as-new, or
 * release before it went away) is that payment arriving again: a duplicate of it, not a new
 * conflict. (A replaced record needs nothing here: the replace gave its key the new content.)
 */
async function answerDecidedConflicts(tx: Queryable, context: RecordContext, conflicts: Candidate[]): Promise<void> {
  if (conflicts.length === 0) return;
  const reviewIds = conflicts.map((d) => reviewIdOf(d.record.naturalKey, d.record.fingerprint));
  const posted = await selectPostedReviews(tx, context.tenantId, reviewIds);
  for (const [index, decision] of conflicts.entries()) {
    const reviewId = reviewIds[index] as string;
    if (!posted.has(reviewId)) continue;
    decide(decision, "duplicate", "INGEST_RECORD_DUPLICATE", `applied as a separate payment by review ${reviewId}`);
    decision.originalRef = posted.get(reviewId) ?? `review:${reviewId}`;
    delete decision.review;
  }
}

/**
 * Two records of one file under one natural key: the later one held, and the first too while it
 * is still in this chunk (not yet posted). Each one's outcome row names the other as its original
 * (the first's posting when an earlier chunk applied it, else `<file>#<record>`): the row is the
 * dedup record of a file's record (docs/decisions/0053).
 */
function holdKeyReusedInFile(later: Candidate, fileId: string, stored: StoredKey, first: Candidate | undefined): void {
  const naturalKey = later.record.naturalKey;
  const firstIndex = stored.record_index ?? 0;
  const stillOpen = first !== undefined && (first.outcome === undefined || first.code === "INGEST_KEY_REUSED_IN_FILE");
  decide(later, "suspect", "INGEST_KEY_REUSED_IN_FILE",
    `record ${firstIndex} of this file has the same natural key (the originator reused a trace): ${stillOpen ? "both held for review" : "that one was applied in an earlier chunk; this one is held for review"}`);
  later.review = { reason: "suspect", matchedRef: naturalKey, inFile: true };
  // A key is claimed with its transfer key before it posts: only an applied key names a posting.
  later.originalRef = !stillOpen && stored.state === "applied" && stored.transfer_key !== null ? stored.transfer_key : `${fileId}#${firstIndex}`;
  if (!stillOpen) return;
  decide(first, "suspect", "INGEST_KEY_REUSED_IN_FILE", `record ${later.item.index} of this file has the same natural key (the originator reused a trace): both held for review`);
  first.review = { reason: "suspect", matchedRef: naturalKey, inFile: true };
  first.originalRef = `${fileId}#${later.item.index}`;
}
