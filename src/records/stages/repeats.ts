import { assert } from "../../assert.ts";
import type { Queryable } from "../../db/pool.ts";
import { achFileCreationOfKey } from "../../normalize/from-ach.ts";
import {
  fileIdOf, type Candidate, type Decided, type Duplicate, type RecordContext,
} from "../decision.ts";
import { reviewIdOf } from "../review-id.ts";
import type { ClaimedKeys } from "./claim-keys.ts";
import { selectFileNames, storedKeysOf, type FileName, type StoredKey } from "../store/keys.ts";
import { selectDecidedVersions, type DecidedVersion } from "../store/reviews.ts";
import type { KeyState } from "../record-states.ts";

/** A repeat and its key's first arrival: a version a person decided on, or else as it compares. */
interface Changed {
  candidate: Candidate;
  first: StoredKey;
  originalRef: string;
}

/**
 * Keys seen before (in an earlier file or request, an earlier chunk, or earlier in this chunk):
 * duplicate or conflict. A key first seen in THIS file is no repeat: the originator gave two
 * records of one file one natural key (a trace reused across batches). Both are held for review,
 * never one silently counted a duplicate of the other (docs/decisions/0006).
 * `repeats` are the undecided records whose keys the claim did not insert.
 */
export async function compareRepeats(
  tx: Queryable, context: RecordContext, repeats: readonly Candidate[], claimed: ClaimedKeys,
): Promise<Decided> {
  const decided: Decided = new Map();
  if (repeats.length === 0) return decided;
  const stored = await storedKeysOfRepeats(tx, context.tenantId, repeats, claimed.stored);
  const freshByKey = new Map([...claimed.fresh].map((d) => [d.record.naturalKey, d]));
  const fileId = fileIdOf(context);
  const changed: Changed[] = [];
  const settled: Changed[] = [];   // same content, under a key a decision replaced or refused
  for (const candidate of repeats) {
    const naturalKey = candidate.record.naturalKey;
    const first = stored.get(naturalKey);
    // The insert said the key exists, and dedup marks are never deleted.
    assert(first, `dedup mark ${naturalKey} exists after the insert conflicted`);
    if (fileId !== null && first.file_id === fileId) {
      holdKeyReusedInFile(decided, candidate, fileId, first, freshByKey.get(naturalKey));
      continue;
    }
    const fileRecord = `${first.file_id}#${first.record_index}`;
    const arrival = first.file_id === null ? first.natural_key : fileRecord;
    const originalRef = first.transfer_key ?? arrival;
    if (first.fingerprint !== candidate.record.fingerprint) {
      changed.push({ candidate, first, originalRef });
    } else if (decidedStates.has(first.state)) {
      settled.push({ candidate, first, originalRef });
    } else {
      decided.set(candidate, { kind: "duplicate", code: "RECORD_DUPLICATE", originalRef });
    }
  }
  if (changed.length === 0 && settled.length === 0) return decided;
  const versions = await decidedVersionsOf(
    tx, context, [...settled, ...changed].map((c) => c.candidate));
  for (const { candidate, originalRef } of settled) {
    decided.set(candidate, versions.get(candidate)
      ?? { kind: "duplicate", code: "RECORD_DUPLICATE", originalRef });
  }
  const conflicts = changed.filter(({ candidate }) => !versions.has(candidate));
  for (const { candidate } of changed) {
    const version = versions.get(candidate);
    if (version) decided.set(candidate, version);
  }
  if (conflicts.length === 0) return decided;
  // Only a conflict's detail names the file its key came in: the names are read for those alone.
  const fileIds = conflicts.flatMap((c) => (c.first.file_id === null ? [] : [c.first.file_id]));
  const names = await selectFileNames(tx, context.tenantId, fileIds);
  for (const { candidate, first, originalRef } of conflicts) {
    decided.set(candidate, {
      kind: "conflict", code: "RECORD_CONFLICT", originalRef,
      review: { matchedRef: originalRef },
      detail: `key first seen in ${describeFirst(first, names)} with other content`,
    });
  }
  return decided;
}

/** Keys a person's decision left in a state of their own: their content was decided on. */
const decidedStates: ReadonlySet<KeyState> = new Set<KeyState>(["replaced", "refused"]);

/**
 * The first arrival of each repeat's key: as the claim read it, else read now (a key first claimed
 * by this chunk, or committed by another transaction while the claim waited on it).
 */
async function storedKeysOfRepeats(
  tx: Queryable, tenantId: string, repeats: readonly Candidate[],
  read: ReadonlyMap<string, StoredKey>,
): Promise<Map<string, StoredKey>> {
  const stored = new Map(read);
  const missing = repeats.map((d) => d.record.naturalKey).filter((key) => !stored.has(key));
  if (missing.length === 0) return stored;
  for (const [key, row] of await storedKeysOf(tx, tenantId, missing)) stored.set(key, row);
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
 * Repeats of a version a person already decided on (docs/decisions/0099): content a replace set
 * aside, or held content refused, applied as new or released. Each is a duplicate of the arrival
 * the decision concerned, naming the decision: nothing is posted and no person is asked again.
 */
async function decidedVersionsOf(
  tx: Queryable, context: RecordContext, candidates: readonly Candidate[],
): Promise<Map<Candidate, Duplicate>> {
  const probes = candidates.map(({ record }) => ({
    naturalKey: record.naturalKey, fingerprint: record.fingerprint,
    reviewId: reviewIdOf(record.naturalKey, record.fingerprint),
  }));
  const rows = await selectDecidedVersions(tx, context.tenantId, probes);
  const found = new Map(rows.map((row) => [`${row.natural_key}\u0000${row.fingerprint}`, row]));
  const duplicates = new Map<Candidate, Duplicate>();
  for (const candidate of candidates) {
    const { naturalKey, fingerprint } = candidate.record;
    const version = found.get(`${naturalKey}\u0000${fingerprint}`);
    if (!version) continue;
    duplicates.set(candidate, {
      kind: "duplicate", code: "RECORD_VERSION_DECIDED", originalRef: version.original_ref,
      detail: describeDecision(version),
    });
  }
  return duplicates;
}

const decidedAs: Record<DecidedVersion["decision"], string> = {
  replace: "replaced", refuse: "refused", apply_as_new: "applied as a separate payment",
  release: "released",
};

/** "a version already decided: replaced by review rev_X (replace by alice: the reason)". */
function describeDecision(version: DecidedVersion): string {
  const why = version.operator === null
    ? (version.reason ?? "no reason recorded")
    : `${version.decision} by ${version.operator}: ${version.reason ?? ""}`;
  return `a version already decided: ${decidedAs[version.decision]} by review `
    + `${version.review_id} (${why})`;
}

/**
 * Two records of one file under one natural key: the later one held, and the first too while it
 * is still in this chunk (not yet posted: the records the claim found new are undecided when
 * repeats run). Each one's outcome row names the other as its original (the first's posting when
 * an earlier chunk applied it, else `<file>#<record>`): the row is the dedup record of a file's
 * record (docs/decisions/0053). A third record of the key holds the first again, naming itself.
 */
function holdKeyReusedInFile(
  decided: Decided, later: Candidate, fileId: string, stored: StoredKey,
  first: Candidate | undefined,
): void {
  const naturalKey = later.record.naturalKey;
  const firstIndex = stored.record_index ?? 0;
  const stillOpen = first !== undefined;
  const review = { matchedRef: naturalKey, inFile: true } as const;
  const reused = "has the same natural key (the originator reused a trace)";
  // A key is claimed with its transfer key before it posts: only an applied key names a posting.
  const posted = !stillOpen && stored.state === "applied" ? stored.transfer_key : null;
  decided.set(later, {
    kind: "suspect", code: "RECORD_KEY_REUSED_IN_FILE", review,
    originalRef: posted ?? `${fileId}#${firstIndex}`,
    detail: `record ${firstIndex} of this file ${reused}: ${stillOpen ? "both held for review"
      : "that one was applied in an earlier chunk; this one is held for review"}`,
  });
  if (!stillOpen) return;
  decided.set(first, {
    kind: "suspect", code: "RECORD_KEY_REUSED_IN_FILE", review,
    originalRef: `${fileId}#${later.item.index}`,
    detail: `record ${later.item.index} of this file ${reused}: both held for review`,
  });
}
