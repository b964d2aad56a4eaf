import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAccount } from "../../src/ledger/accounts.ts";
import { addAccountAlias } from "../../src/partners/partners.ts";
import { listReviews } from "../../src/records/review-queue.ts";
import { decideReview } from "../../src/records/review-decision.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { post, transferOf } from "../support/ledger-fixtures.ts";
import { balances, fixture, givenScene, ingest, noOutcomes, settlementOf, suspenseOf, transferCount } from "./support.ts";

describe("records: counterparties, funds, record-level rejections, ISO 20022, reviews", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("credits the customer account an alias names, and the unknown ones to suspense, listed as unresolved", async () => {
    const scene = await givenScene(db.pool, "alias");
    await openAccount(db.pool, { tenantId: scene.tenantId, accountId: "payee-one", kind: "customer", currency: "USD" });
    expect(await addAccountAlias(db.pool, scene.tenantId, "aba:091000019:1000001", "payee-one")).toEqual({ ok: true, value: "created" });
    await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    expect(await balances(db.pool, scene.tenantId)).toEqual({ "payee-one": 10_000n, [settlementOf(scene)]: 150_000n, [suspenseOf(scene)]: 140_000n });
    const { rows } = await db.pool.query<{ code: string | null }>(
      `SELECT code FROM record_outcome WHERE tenant_id = $1 ORDER BY record_index`,
      [scene.tenantId]);
    const unresolved = Array(4).fill("RECORD_COUNTERPARTY_UNRESOLVED");
    expect(rows.map((r) => r.code)).toEqual([null, ...unresolved]);
  });

  it("rejects an incoming debit the customer cannot cover, with the reason to return it, and posts nothing for it", async () => {
    const scene = await givenScene(db.pool, "funds");
    await openAccount(db.pool, { tenantId: scene.tenantId, accountId: "turing", kind: "customer", currency: "USD" });
    await addAccountAlias(db.pool, scene.tenantId, "aba:021000021:9876543", "turing");
    await post(db.pool, transferOf(scene.tenantId, "seed", settlementOf(scene), "turing", 50_000n));
    const report = await ingest(db.pool, scene, fixture("ach/base-valid.ach"), "base.ach");
    // 980.50 debit against 500.00: refused; the two credits apply.
    expect(report.outcomes).toEqual({ ...noOutcomes, applied: 2, rejected: 1 });
    const returnedR01 = expect.stringMatching(/R01/);
    const refused = { line: 4, code: "RECORD_INSUFFICIENT_FUNDS", message: returnedR01 };
    expect(report.errors).toEqual([refused]);
    expect((await balances(db.pool, scene.tenantId)).turing).toBe(50_000n);
    const again = await ingest(db.pool, scene, fixture("ach/base-valid.ach"), "base-again.ach");
    expect(again.outcomes).toEqual({ ...noOutcomes, duplicate: 3 });
  });

  it("rejects only the entry whose own field is wrong, with its line, and applies the rest", async () => {
    const scene = await givenScene(db.pool, "entry");
    const report = await ingest(db.pool, scene, fixture("ach/malformed-check-digit.ach"), "check-digit.ach");
    expect(report).toMatchObject({ status: "done", outcomes: { ...noOutcomes, applied: 2, rejected: 1 } });
    expect(report.errors).toMatchObject([{ line: 4, code: "ACH_ROUTING_CHECK_DIGIT" }]);
  });

  it("applies ISO 20022 credits in their currencies, answers a re-sent message (one amount changed) with duplicates and a conflict, and posts a return once", async () => {
    const scene = await givenScene(db.pool, "iso");
    const first = await ingest(db.pool, scene, fixture("iso20022/pacs008-multi.xml"), "pacs008.xml");
    expect(first).toMatchObject({ status: "done", format: "iso20022", outcomes: { ...noOutcomes, applied: 3 } });
    const resent = await ingest(db.pool, scene, fixture("iso20022/pacs008-multi-resend.xml"), "pacs008-resend.xml");
    expect(resent.outcomes).toEqual({ ...noOutcomes, duplicate: 2, conflict: 1 });
    const returned = await ingest(db.pool, scene, fixture("iso20022/pacs004-return.xml"), "pacs004.xml");
    expect(returned.outcomes).toEqual({ ...noOutcomes, applied: 1 });
    expect((await ingest(db.pool, scene, fixture("iso20022/pacs004-return.xml"), "pacs004-again.xml")).outcomes).toEqual({ ...noOutcomes, duplicate: 1 });
    const status = await ingest(db.pool, scene, fixture("iso20022/pacs002-status.xml"), "pacs002.xml");
    expect(status.outcomes).toEqual({ ...noOutcomes, applied: 2 });
    expect(await transferCount(db.pool, scene.tenantId)).toBe(4);
    const money = await balances(db.pool, scene.tenantId);
    expect(money[`partner.${scene.partner.name}.settlement.EUR`]).toBe(0n);   // 1,000.00 in, returned
    expect(money[`partner.${scene.partner.name}.settlement.JPY`]).toBe(150_000n);
    expect(money[`partner.${scene.partner.name}.settlement.USD`]).toBe(50n);
  });

  it("rejects a whole ISO 20022 file whose header miscounts its transactions, and only the bad transaction otherwise", async () => {
    const scene = await givenScene(db.pool, "isobad");
    const miscounted = await ingest(db.pool, scene, fixture("iso20022/bad/pacs008-nboftxs-7-of-8.xml"), "nboftxs.xml");
    expect(miscounted).toMatchObject({ status: "rejected", outcomes: noOutcomes, errors: [{ code: "ISO20022_NBOFTXS_MISMATCH", xml_path: "/Document/FIToFICstmrCdtTrf/GrpHdr/NbOfTxs" }] });
    const oneBad = await ingest(db.pool, scene, fixture("iso20022/bad/pacs008-uetr-uppercase.xml"), "uetr.xml");
    expect(oneBad).toMatchObject({ status: "done", outcomes: { ...noOutcomes, applied: 1, rejected: 1 }, errors: [{ code: "ISO20022_UETR_INVALID", xml_path: "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[2]" }] });
  });

  it("leaves one outcome row per duplicate, conflict and suspect of a file, with its reason, position and original effect, and no dedup_event", async () => {
    const scene = await givenScene(db.pool, "events");
    const original = await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    const corrected = await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected.ach");
    const renumbered = await ingest(db.pool, scene, fixture("ach/original-renumbered.ach"), "renumbered.ach");
    // Each repeat's row names, as its original, the posting of the record it repeats (decision 0053).
    const { rows } = await db.pool.query<{ outcome: string; code: string; n: bigint }>(
      `SELECT o.outcome, o.code, count(*) AS n FROM record_outcome o
         JOIN record_outcome first ON first.tenant_id = o.tenant_id AND first.file_id = $2
           AND first.transfer_key = o.original_ref
        WHERE o.tenant_id = $1 AND o.file_id = ANY($3::text[]) AND o.outcome IN ('duplicate', 'conflict', 'suspect')
          AND o.position ~ '^line [0-9]+$' AND o.natural_key IS NOT NULL
        GROUP BY o.outcome, o.code ORDER BY o.outcome`, [scene.tenantId, original.file_id, [corrected.file_id, renumbered.file_id]]);
    expect(rows).toEqual([
      { outcome: "conflict", code: "RECORD_CONFLICT", n: 1n },
      { outcome: "duplicate", code: "RECORD_DUPLICATE", n: 3n },
      { outcome: "suspect", code: "RECORD_SUSPECT", n: BigInt(renumbered.outcomes.suspect) },
    ]);
    expect(renumbered.outcomes.suspect).toBeGreaterThan(0);
    const events = await db.pool.query("SELECT 1 FROM dedup_event WHERE tenant_id = $1", [scene.tenantId]);
    expect(events.rowCount).toBe(0);
  });

  it("posts a suspect applied as new once under a key derived from the record and the review, and records a refusal with its reason", async () => {
    const scene = await givenScene(db.pool, "release");
    await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    await ingest(db.pool, scene, fixture("ach/original-renumbered.ach"), "renumbered.ach");
    const [first, second] = await listReviews(db.pool, { tenantId: scene.tenantId });
    const decide = (reviewId: string, decision: "apply_as_new" | "refuse", reason: string) =>
      decideReview(db.pool, { tenantId: scene.tenantId, reviewId, decision, reason, operator: "ops-1" });
    const applied = await decide(first?.review_id ?? "", "apply_as_new", "a second payment was intended");
    expect(applied).toMatchObject({ ok: true, value: { decided: { state: "applied_as_new", posting_key: `${first?.natural_key}:new:${first?.review_id}` } } });
    expect(await decide(first?.review_id ?? "", "apply_as_new", "again")).toMatchObject({ ok: true, value: { decided: { state: "applied_as_new", reason: "a second payment was intended" } } });
    expect(await decide(second?.review_id ?? "", "refuse", "a renumbered resend")).toMatchObject({ ok: true, value: { decided: { state: "refused" } } });
    const again = await decide(second?.review_id ?? "", "apply_as_new", "no");
    expect(again).toMatchObject({ ok: false, error: { code: "REVIEW_DECIDED" } });
    expect(await transferCount(db.pool, scene.tenantId)).toBe(6);
    expect(await listReviews(db.pool, { tenantId: scene.tenantId })).toHaveLength(3);
    expect((await verifyLedger(db.pool)).ok).toBe(true);
  });
});
