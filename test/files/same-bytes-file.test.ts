import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pool } from "../../src/db/pool.ts";
import { openAccount } from "../../src/ledger/accounts.ts";
import { dedupDecisions } from "../../src/observability/metrics.ts";
import { addAccountAlias } from "../../src/partners/partners.ts";
import { decideReview } from "../../src/records/review-decision.ts";
import { listReviews } from "../../src/records/review-queue.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { balances, fixture, givenTwin, ingest, ledgerLines, noOutcomes, PAYEE_TWO_KEY, type Scene } from "./support.ts";

// A file received again byte for byte is answered from the earlier file that applied every one of
// its records (docs/decisions/0055). Each case is held against reading the same records: the
// same file with CRLF line endings has other bytes (so it is read) and the same records.

const crlf = (bytes: Buffer): Buffer => Buffer.from(bytes.toString("latin1").replace(/\r?\n/g, "\r\n"), "latin1");

/** A file's outcome rows, file ids made neutral (each tenant has its own): what reading it, or answering it, decided per record. */
async function outcomeRows(pool: Pool, scene: Scene, fileId: string): Promise<unknown[]> {
  const { rows } = await pool.query<Record<string, unknown>>(
    `SELECT record_index, position, natural_key, outcome, code, field, detail, kind, amount_minor, currency, original_ref, transfer_key
       FROM record_outcome WHERE tenant_id = $1 AND file_id = $2
         ORDER BY record_index`, [scene.tenantId, fileId]);
  const neutral = (value: unknown) => (typeof value === "string" ? value.replace(/fil_[0-9a-f]+/g, "FILE") : value);
  return rows.map((row) => ({ ...row, detail: neutral(row.detail), original_ref: neutral(row.original_ref) }));
}

async function duplicatesCounted(): Promise<number> {
  return (await dedupDecisions.get()).values.find((v) => v.labels.channel === "ach" && v.labels.reason === "duplicate")?.value ?? 0;
}

/** Two tenants with the same history: one gets the identical bytes, the other the same records read from other bytes. */
async function givenTwoTenants(pool: Pool, name: string): Promise<[Scene, Scene]> {
  return [await givenTwin(pool, `${name}-same`), await givenTwin(pool, `${name}-read`)];
}

describe("a file with the same bytes as one that applied every record is answered from it, as reading it would decide", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("answers every record as a duplicate naming the original's posting, with the rows reading them writes, and posts nothing", async () => {
    const [same, read] = await givenTwoTenants(db.pool, "whole");
    const firsts = [];
    for (const scene of [same, read]) firsts.push(await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach"));
    const ledgerBefore = await ledgerLines(db.pool, same.tenantId);
    const counted = await duplicatesCounted();

    const answered = await ingest(db.pool, same, fixture("ach/original.ach"), "again.ach");
    const reread = await ingest(db.pool, read, crlf(fixture("ach/original.ach")), "again.ach");

    expect(answered).toMatchObject({ status: "done", outcomes: { ...noOutcomes, duplicate: 5 }, same_bytes_as: firsts[0]?.file_id, correction_of: null });
    expect(reread).toMatchObject({ status: "done", outcomes: { ...noOutcomes, duplicate: 5 }, same_bytes_as: null, correction_of: null });
    expect(await outcomeRows(db.pool, same, answered.file_id)).toEqual(await outcomeRows(db.pool, read, reread.file_id));
    expect(await duplicatesCounted()).toBe(counted + 10);
    expect(await ledgerLines(db.pool, same.tenantId)).toEqual(ledgerBefore);
  });

  it("answers in chunks, each one transaction, and names the file that answered it", async () => {
    const scene = await givenTwin(db.pool, "chunks");
    const first = await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    const answered = await ingest(db.pool, scene, fixture("ach/original.ach"), "again.ach", { chunkRecordsMax: 2 });
    expect(answered).toMatchObject({ outcomes: { ...noOutcomes, duplicate: 5 }, same_bytes_as: first.file_id });
    const { rows } = await db.pool.query(
      `SELECT original_ref FROM record_outcome WHERE tenant_id = $1 AND file_id = $2
         ORDER BY record_index`,
      [scene.tenantId, answered.file_id]);
    const { rows: postings } = await db.pool.query(
      `SELECT transfer_key AS original_ref FROM record_outcome WHERE tenant_id = $1 AND file_id = $2
         ORDER BY record_index`,
      [scene.tenantId, first.file_id]);
    expect(rows).toEqual(postings);
  });

  it("answers from the file that applied the records, not from a later copy that repeated them", async () => {
    const scene = await givenTwin(db.pool, "copies");
    const first = await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    await ingest(db.pool, scene, fixture("ach/original.ach"), "copy-1.ach");
    const third = await ingest(db.pool, scene, fixture("ach/original.ach"), "copy-2.ach");
    expect(third).toMatchObject({ outcomes: { ...noOutcomes, duplicate: 5 }, same_bytes_as: first.file_id });
  });

  it("reads the records again once a person replaced one of them: the replaced record repeats the version the replace set aside, as reading decides, the rest are duplicates", async () => {
    const [same, read] = await givenTwoTenants(db.pool, "replaced");
    const firsts = [];
    for (const scene of [same, read]) {
      await openAccount(db.pool, { tenantId: scene.tenantId, accountId: "payee-two", kind: "customer", currency: "USD" });
      await addAccountAlias(db.pool, scene.tenantId, "aba:021000021:1000002", "payee-two");
      firsts.push(await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach"));
      await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected.ach");
      const [held] = await listReviews(db.pool, { tenantId: scene.tenantId });
      if (!held) throw new Error("the corrected record was not held");
      const decided = await decideReview(db.pool, { tenantId: scene.tenantId, reviewId: held.review_id, decision: "replace", reason: "partner confirmed 205.00", operator: "ops-1" });
      expect(decided.ok).toBe(true);
    }
    const balancesBefore = await balances(db.pool, same.tenantId);

    // Records 1 and 2 (payee two) in the first chunk of two: the first chunk is read from record 1 on.
    const answered = await ingest(db.pool, same, fixture("ach/original.ach"), "original-again.ach", { chunkRecordsMax: 2 });
    const reread = await ingest(db.pool, read, crlf(fixture("ach/original.ach")), "original-again.ach", { chunkRecordsMax: 2 });

    // Before decision 0099 the replaced record was a new conflict, for the person to decide again.
    expect(answered.outcomes).toEqual({ ...noOutcomes, duplicate: 5 });
    expect(answered.repeats_decided).toBe(1);
    expect(await outcomeRows(db.pool, same, answered.file_id)).toEqual(await outcomeRows(db.pool, read, reread.file_id));
    const { rows } = await db.pool.query(
      `SELECT outcome, code FROM record_outcome WHERE tenant_id = $1 AND file_id = $2
         AND natural_key = $3`,
      [same.tenantId, answered.file_id, PAYEE_TWO_KEY]);
    expect(rows).toEqual([{ outcome: "duplicate", code: "RECORD_VERSION_DECIDED" }]);
    expect(await balances(db.pool, same.tenantId)).toEqual(balancesBefore);
    expect(firsts[0]?.outcomes.applied).toBe(5);
  });

  it("answers the chunks before a replaced record from the earlier file and reads the file from that chunk on", async () => {
    const scene = await givenTwin(db.pool, "partly");
    await openAccount(db.pool, { tenantId: scene.tenantId, accountId: "payee-two", kind: "customer", currency: "USD" });
    await addAccountAlias(db.pool, scene.tenantId, "aba:021000021:1000002", "payee-two");
    const first = await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected.ach");
    const [held] = await listReviews(db.pool, { tenantId: scene.tenantId });
    if (!held) throw new Error("the corrected record was not held");
    expect((await decideReview(db.pool, { tenantId: scene.tenantId, reviewId: held.review_id, decision: "replace", reason: "confirmed", operator: "ops-1" })).ok).toBe(true);
    const { rows: [payeeTwo] } = await db.pool.query<{ record_index: number }>(
      `SELECT record_index FROM record_outcome WHERE tenant_id = $1 AND file_id = $2
         AND natural_key = $3`,
      [scene.tenantId, first.file_id, PAYEE_TWO_KEY]);
    expect(payeeTwo?.record_index).toBe(2);

    // Chunks of one: record 1 is answered (the receipt names the file), record 2 on is read.
    const answered = await ingest(db.pool, scene, fixture("ach/original.ach"), "original-again.ach", { chunkRecordsMax: 1 });
    expect(answered).toMatchObject({ outcomes: { ...noOutcomes, duplicate: 5 }, same_bytes_as: first.file_id, repeats_decided: 1 });
  });

  it("answers an ISO 20022 file with the same bytes the same way, with the rows reading it writes", async () => {
    const [same, read] = await givenTwoTenants(db.pool, "pacs008");
    for (const scene of [same, read]) expect((await ingest(db.pool, scene, fixture("iso20022/pacs008-multi.xml"), "pacs008.xml")).outcomes.applied).toBeGreaterThan(1);
    const answered = await ingest(db.pool, same, fixture("iso20022/pacs008-multi.xml"), "again.xml");
    const reread = await ingest(db.pool, read, crlf(fixture("iso20022/pacs008-multi.xml")), "again.xml");
    expect(answered.same_bytes_as).not.toBeNull();
    expect(reread.same_bytes_as).toBeNull();
    expect(answered.outcomes).toEqual(reread.outcomes);
    expect(await outcomeRows(db.pool, same, answered.file_id)).toEqual(await outcomeRows(db.pool, read, reread.file_id));
  });

  it("reads a file whose earlier copy did not apply every record, and decides it as reading decides", async () => {
    const [same, read] = await givenTwoTenants(db.pool, "not-all-applied");
    for (const scene of [same, read]) {
      // The return file's returns find no original: orphans, not applied.
      const first = await ingest(db.pool, scene, fixture("ach/returns.ach"), "returns.ach");
      expect(first.outcomes.applied).toBeLessThan(first.records);
    }
    const again = await ingest(db.pool, same, fixture("ach/returns.ach"), "returns-again.ach");
    const reread = await ingest(db.pool, read, crlf(fixture("ach/returns.ach")), "returns-again.ach");
    expect(again.same_bytes_as).toBeNull();
    expect(await outcomeRows(db.pool, same, again.file_id)).toEqual(await outcomeRows(db.pool, read, reread.file_id));
  });
});
