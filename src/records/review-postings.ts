import { assert } from "../assert.ts";
import type { Tx } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { postedTransfer } from "../ledger/index.ts";
import type { CanonicalRecord } from "../normalize/canonical-record.ts";
import {
  compensationFor, correctionKinds, newPaymentTransferKeyOf, postingRuleFor, replacementTransferKeyOf, reversalFor, transferFor,
  type PostingRule, type Transfer,
} from "../normalize/posting-rules.ts";
import { ensurePartnerAccounts, findPartner, resolveAliases } from "../partners/partners.ts";
import { selectKeyMark, type ReviewRow } from "./store/reviews.ts";

/** What a decision does to a dedup mark: its new state and effect, and for a replace its new content. */
export interface KeyMark {
  naturalKey: string;
  state: "applied" | "refused" | "replaced";
  transferKey: string | null;
  matchedKey?: string;   // an accepted late return: the original it returned
  content?: { fingerprint: string; amountMinor: string; currency: string; valueDate: string };
}

/** The postings of one decision, in the order they are posted, and the dedup marks they change. */
export interface DecisionPostings {
  ordered: Transfer[];
  compensation?: Transfer;
  posting?: Transfer;
  originalTransferKey: string | null;
  keyMarks: KeyMark[];
  /** A replace: the content it sets aside and the posting that content had (0099). */
  superseded?: { naturalKey: string; fingerprint: string; supersededRef: string };
}

/** Every posting a decision makes names the review as its origin. */
function originOf(row: ReviewRow): string {
  return `review:${row.review_id}`;
}

function heldRecordOf(row: ReviewRow): CanonicalRecord {
  const stored = row.record.record;
  return { ...stored, amount: BigInt(stored.amount) };
}

/** The postings of a decision (docs/decisions/0011), or why it has no meaning for this item. */
export async function decisionPostings(tx: Tx, row: ReviewRow, decision: "replace" | "apply_as_new" | "refuse"): Promise<Result<DecisionPostings, Finding>> {
  // A conflict's key stays the first content's; a suspect's or a late return's is its own.
  const ownKey = row.reason !== "conflict";
  if (decision === "refuse") {
    return ok({ ordered: [], originalTransferKey: null, keyMarks: ownKey ? [{ naturalKey: row.natural_key, state: "refused", transferKey: null }] : [] });
  }
  if (row.reason === "late_return") return acceptLateReturn(tx, row, decision);
  if (decision === "apply_as_new") {
    const posting = await postingOfHeldRecord(tx, row, newPaymentTransferKeyOf(row.natural_key, row.review_id));
    if (!posting.ok) return posting;
    const keyMarks: KeyMark[] = ownKey ? [{ naturalKey: row.natural_key, state: "applied", transferKey: posting.value?.transferKey ?? null }] : [];
    return ok({ ordered: posting.value ? [posting.value] : [], ...(posting.value ? { posting: posting.value } : {}), originalTransferKey: null, keyMarks });
  }
  return replacePostings(tx, row);
}

const notApplicable = (message: string) => fail(finding(
  "REVIEW_NOT_APPLICABLE", `${message}: replace has no meaning here; apply-as-new or refuse remain`,
  { field: "decision" }));

/**
 * A late return accepted (apply_as_new): the money moves back as for a timely return, the
 * original's legs reversed, and the return's key is linked to the original it returned, so a
 * second return of it is seen (docs/decisions/0094). Replace has no meaning for a return, and an
 * original returned meanwhile is not reversed twice.
 */
async function acceptLateReturn(
  tx: Tx, row: ReviewRow, decision: "replace" | "apply_as_new",
): Promise<Result<DecisionPostings, Finding>> {
  const refuse = (why: string) => fail(finding("REVIEW_NOT_APPLICABLE",
    `${why}: nothing posted; refuse remains`, { field: "decision" }));
  if (decision === "replace") {
    return refuse(`review ${row.review_id} holds a late return: accept it with apply-as-new`);
  }
  const originalKey = row.matched_ref;
  assert(originalKey !== null, `late return review ${row.review_id} names its original`);
  const mark = await selectKeyMark(tx, row.tenant_id, originalKey);
  if (mark?.returned) return refuse(`the original ${originalKey} was returned meanwhile`);
  const transferKey = newPaymentTransferKeyOf(row.natural_key, row.review_id);
  const posting = await postingOfHeldRecord(tx, row, transferKey);
  if (!posting.ok) return posting;
  const reversal = posting.value;
  const keyMarks: KeyMark[] = [{
    naturalKey: row.natural_key, state: "applied", transferKey: reversal?.transferKey ?? null,
    matchedKey: originalKey,
  }];
  return ok({
    ordered: reversal ? [reversal] : [], ...(reversal ? { posting: reversal } : {}),
    originalTransferKey: null, keyMarks,
  });
}

/**
 * Replace: the original's posting compensated (`<its key>:compensate`, every leg mirrored) and the
 * held record posted as `<natural key>:replace:<review id>`, both marked as technical
 * corrections. The leg that pays the customer goes first, so the funds check asks for the net.
 */
async function replacePostings(tx: Tx, row: ReviewRow): Promise<Result<DecisionPostings, Finding>> {
  const record = heldRecordOf(row);
  const rule = postingRuleFor(record);
  if (!rule || rule.action !== "post") return notApplicable(`the held record is a ${record.kind} (${rule?.action ?? "no posting rule"})`);
  // A conflict corrects the record under its own key; a suspect replaces the record it matched.
  const replacedKey = row.reason === "conflict" ? row.natural_key : row.matched_ref;
  if (!replacedKey) return notApplicable(`review ${row.review_id} names no record it matched`);
  const mark = await selectKeyMark(tx, row.tenant_id, replacedKey);
  if (!mark || mark.state !== "applied" || mark.transfer_key === null) return notApplicable(`the original ${replacedKey} has no posting to compensate (${mark?.state ?? "unknown"})`);
  if (mark.returned) return notApplicable(`the original ${replacedKey} was returned; compensating it would reverse it twice`);
  const original = await postedTransfer(tx, row.tenant_id, mark.transfer_key);
  assert(original, `the dedup mark of ${replacedKey} names posted transfer ${mark.transfer_key}`);

  const compensation = compensationFor(original, originOf(row));
  const posting = await postingOfHeldRecord(tx, row, replacementTransferKeyOf(row.natural_key, row.review_id), correctionKinds.replacement);
  if (!posting.ok) return posting;
  const corrected = posting.value;
  const customerPaidByPosting = rule.legs?.find((leg) => leg.account === "counterparty")?.direction === "C";
  const ordered = corrected ? (customerPaidByPosting ? [corrected, compensation] : [compensation, corrected]) : [compensation];
  const correctedKey = corrected?.transferKey ?? null;
  const keyMarks: KeyMark[] = row.reason === "conflict"
    ? [{ naturalKey: replacedKey, state: "applied", transferKey: correctedKey, content: { fingerprint: record.fingerprint, amountMinor: record.amount.toString(), currency: record.currency, valueDate: record.valueDate } }]
    : [{ naturalKey: replacedKey, state: "replaced", transferKey: mark.transfer_key }, { naturalKey: row.natural_key, state: "applied", transferKey: correctedKey }];
  const superseded = {
    naturalKey: replacedKey, fingerprint: mark.fingerprint, supersededRef: mark.transfer_key,
  };
  return ok({
    ordered, compensation, ...(corrected ? { posting: corrected } : {}),
    originalTransferKey: mark.transfer_key, keyMarks, superseded,
  });
}

/**
 * The held record's own posting under `transferKey`, by the same posting rules as ingestion
 * (counterparty alias, else the partner's suspense account; a return reverses the original it
 * matched). Undefined when the record posts nothing (a zero amount, a record-only kind).
 */
async function postingOfHeldRecord(tx: Tx, row: ReviewRow, transferKey: string, kind?: string): Promise<Result<Transfer | undefined, Finding>> {
  const record = heldRecordOf(row);
  const rule = postingRuleFor(record);
  if (!rule || record.amount === 0n || rule.action === "record") return ok(undefined);
  const built = rule.action === "post" ? await forwardPosting(tx, row, record, rule, transferKey) : await reversalPosting(tx, row, record, transferKey);
  if (!built.ok) return built;
  return ok({ ...built.value, ...(kind ? { kind } : {}), sourceRef: originOf(row) });
}

async function forwardPosting(tx: Tx, row: ReviewRow, record: CanonicalRecord, rule: PostingRule, transferKey: string): Promise<Result<Transfer, Finding>> {
  const partner = await findPartner(tx, row.tenant_id, row.partner_id);
  if (!partner) {
    const detail = `partner ${row.partner_id} is gone`;
    return fail(finding("PARTNER_UNKNOWN", detail, { field: "partner" }));
  }
  const accounts = await ensurePartnerAccounts(tx, partner, record.currency);
  if (!accounts.ok) return accounts;
  const alias = rule.counterparty ? record.attributes[rule.counterparty] : undefined;
  const resolved = alias ? (await resolveAliases(tx, row.tenant_id, [alias])).get(alias) : undefined;
  return ok(transferFor(record, rule, accounts.value, resolved && resolved.currency === record.currency ? resolved.accountId : undefined, transferKey));
}

async function reversalPosting(tx: Tx, row: ReviewRow, record: CanonicalRecord, transferKey: string): Promise<Result<Transfer, Finding>> {
  const mark = row.matched_ref === null ? undefined : await selectKeyMark(tx, row.tenant_id, row.matched_ref);
  const original = mark?.transfer_key ? await postedTransfer(tx, row.tenant_id, mark.transfer_key) : undefined;
  if (!original || original.legs.length !== 2) {
    const detail = `the original ${row.matched_ref} has no posting to reverse`;
    return fail(finding("RECORD_ORPHAN", detail, { field: "original" }));
  }
  return ok(reversalFor(record, original.legs, transferKey));
}
