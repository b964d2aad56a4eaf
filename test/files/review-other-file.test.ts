import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAccount } from "../../src/ledger/accounts.ts";
import { addAccountAlias } from "../../src/partners/partners.ts";
import { listReviews } from "../../src/records/review-queue.ts";
import { decideReview } from "../../src/records/review-decision.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { balances, fixture, givenScene, ingest, PAYEE_TWO_KEY } from "./support.ts";

// corrected.ach is another file of original.ach's originator (File ID Modifier I, created
// 2025-03-04 10:15): it pays payee two 205.00 under the trace original.ach paid 200.00.
const PAYEE_TWO_ALIAS = "aba:021000021:1000002";
describe("a review item caused by another file of the same originator says which file", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("names the other file, its creation time and record on the item and in its detail, and apply-as-new then posts the record as a separate payment", async () => {
    const scene = await givenScene(db.pool, "other-file");
    await openAccount(db.pool, { tenantId: scene.tenantId, accountId: "payee-two", kind: "customer", currency: "USD" });
    await addAccountAlias(db.pool, scene.tenantId, PAYEE_TWO_ALIAS, "payee-two");
    const first = await ingest(db.pool, scene, fixture("ach/original.ach"), "ACME-0304-A.ach");
    await ingest(db.pool, scene, fixture("ach/corrected.ach"), "ACME-0304-I.ach");

    const [item, ...others] = await listReviews(db.pool, { tenantId: scene.tenantId });
    expect(others).toEqual([]);
    expect(item).toMatchObject({
      reason: "conflict", natural_key: PAYEE_TWO_KEY,
      matched_file: { file_id: first.file_id, name: "ACME-0304-A.ach", created: "2025-03-04 10:15", record_index: 2 },
    });
    expect(item?.detail).toBe(`key first seen in ACME-0304-A.ach (${first.file_id}, created 2025-03-04 10:15) record 2 with other content`);

    const decided = await decideReview(db.pool, { tenantId: scene.tenantId, reviewId: item?.review_id ?? "", decision: "apply_as_new", reason: "originator reused the trace for a second payment", operator: "ops-1" });
    expect(decided.ok).toBe(true);
    expect((await balances(db.pool, scene.tenantId))["payee-two"]).toBe(20_000n + 20_500n);
  });

  it("names no other file when the trace was reused inside the one file", async () => {
    const scene = await givenScene(db.pool, "same-file");
    await ingest(db.pool, scene, fixture("ach/trace-reused-across-batches.ach"), "reused.ach");
    const items = await listReviews(db.pool, { tenantId: scene.tenantId });
    expect(items.map((i) => [i.reason, i.matched_file])).toEqual([["suspect", null], ["suspect", null]]);
  });
});
