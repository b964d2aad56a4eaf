import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { httpRefundRecord } from "../../src/normalize/from-http.ts";
import { fund, givenApiWorld, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";
import { runCliInProcess } from "../support/cli.ts";
import {
  createTestDatabase, migrationSqlOnTodaysTables, type TestDatabase,
} from "../support/database.ts";
import { entrySums } from "../support/money.ts";

/**
 * HTTP refunds are decided by the record core (docs/decisions/0038): the record
 * `api-refund:<client_reference>` undoes part of the payment it names, under the API's transfer key
 * `api:<client_reference>:refund`, never above the payment's amount.
 */
describe("HTTP refunds through the record core", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  const keyOf = async (naturalKey: string) => (await db.pool.query<{ fingerprint: string; channel: string; kind: string; state: string; transfer_key: string | null; matched_key: string | null; original_ref: string | null }>(
    `SELECT fingerprint, channel, kind, state, transfer_key, matched_key, original_ref
       FROM record_key WHERE tenant_id = $1
       AND natural_key = $2`, [world.tenantId, naturalKey])).rows;
  const undoneOf = async (naturalKey: string) => (await db.pool.query<{ undone_minor: string }>(
    `SELECT undone_minor::text FROM record_key WHERE tenant_id = $1
       AND natural_key = $2`, [world.tenantId, naturalKey])).rows[0]?.undone_minor;
  const transfersLike = async (pattern: string) => (await db.pool.query<{ transfer_key: string; kind: string }>(
    "SELECT transfer_key, kind FROM transfer WHERE tenant_id = $1 AND transfer_key LIKE $2 ORDER BY transfer_key", [world.tenantId, pattern])).rows;
  const transferCount = async () => Number((await db.pool.query("SELECT count(*) AS n FROM transfer WHERE tenant_id = $1", [world.tenantId])).rows[0].n);
  const pay = async (reference: string, amount: string, extra: Record<string, unknown> = {}) => {
    const paid = await world.client.post("/v1/payments", paymentRequest(reference, amount, extra), { "idempotency-key": randomUUID() });
    expect(paid.status).toBe(201);
    return paid.json.id as string;
  };
  const refund = (reference: string, paymentId: string, amount: string) =>
    world.client.post("/v1/refunds", { client_reference: reference, payment_id: paymentId, amount }, { "idempotency-key": randomUUID() });

  beforeAll(async () => {
    db = await createTestDatabase();
    world = await givenApiWorld(db.pool, "refund-core");
    await fund(world.client, "alice", "500.00");
  });
  afterAll(async () => {
    await world.api.close();
    await db.drop();
  });

  it("claims the refund's own key with the normalizer's fingerprint, linked to the payment's key, and posts one transfer api:<ref>:refund mirroring the payment", async () => {
    const paymentId = await pay("core-pay-1", "20.00");
    const refunded = await refund("core-rf-1", paymentId, "7.50");
    expect(refunded.status).toBe(201);
    const refundRequest = {
      clientReference: "core-rf-1", paymentClientReference: "core-pay-1", amountMinor: 750n,
      currency: "USD",
    };
    const arrival = { position: "test", sourceRef: "test", valueDate: "2026-12-03" };
    const expected = httpRefundRecord(world.tenantId, refundRequest, arrival).record;
    expect(await keyOf("api-refund:core-rf-1")).toEqual([{
      fingerprint: expected?.fingerprint, channel: "http", kind: "refund", state: "applied",
      transfer_key: "api:core-rf-1:refund", matched_key: "api:core-pay-1",
      original_ref: "api:core-pay-1",
    }]);
    expect(await transfersLike("api:core-rf-1:%")).toEqual([{ transfer_key: "api:core-rf-1:refund", kind: "refund" }]);
    const legs = await db.pool.query("SELECT account_id, direction, amount_minor::text FROM ledger_entry WHERE tenant_id = $1 AND transfer_key = 'api:core-rf-1:refund' ORDER BY entry_key", [world.tenantId]);
    expect(legs.rows).toEqual([{ account_id: "alice", direction: "C", amount_minor: "750" }, { account_id: "bob", direction: "D", amount_minor: "750" }]);
    expect(await undoneOf("api:core-pay-1")).toBe("750");
  });

  it("posts nothing for a repeat of a refund's client_reference, answers duplicate_client_reference and records the repeat as a duplicate", async () => {
    const paymentId = await pay("core-pay-2", "20.00");
    const first = await refund("core-rf-2", paymentId, "5.00");
    const before = await transferCount();
    const again = await world.client.post("/v1/refunds", { client_reference: "core-rf-2", payment_client_reference: "core-pay-2", amount: "5" }, { "idempotency-key": randomUUID() });
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ code: "duplicate_client_reference", refund_id: first.json.id });
    expect(await transferCount()).toBe(before);
    const events = await db.pool.query("SELECT channel, reason, original_ref FROM dedup_event WHERE tenant_id = $1 AND dedup_key = 'api-refund:core-rf-2'", [world.tenantId]);
    expect(events.rows).toEqual([{ channel: "http", reason: "duplicate", original_ref: "api:core-rf-2:refund" }]);
    expect(await undoneOf("api:core-pay-2")).toBe("500");
  });

  it("applies two partial refunds up to the payment's amount and refuses a third with nothing left to refund", async () => {
    const paymentId = await pay("core-pay-3", "10.00");
    expect((await refund("core-rf-3a", paymentId, "6.00")).status).toBe(201);
    expect((await refund("core-rf-3b", paymentId, "4.00")).status).toBe(201);
    const third = await refund("core-rf-3c", paymentId, "0.01");
    expect(third.status).toBe(422);
    expect(third.json).toMatchObject({ code: "refund_exceeds_payment", refundable_minor: "0" });
    expect(await transfersLike("api:core-rf-3%")).toEqual([{ transfer_key: "api:core-rf-3a:refund", kind: "refund" }, { transfer_key: "api:core-rf-3b:refund", kind: "refund" }]);
    expect(await undoneOf("api:core-pay-3")).toBe("1000");
    expect((await world.client.get(`/v1/payments/${paymentId}`)).json.refunded_amount).toBe("10.00");
  });

  it("claims no key for a refund refused for exceeding the payment: the same client_reference, corrected, is applied", async () => {
    const paymentId = await pay("core-pay-4", "10.00");
    const tooMuch = await refund("core-rf-4", paymentId, "10.01");
    expect(tooMuch.json).toMatchObject({ code: "refund_exceeds_payment", refundable_minor: "1000" });
    expect(await keyOf("api-refund:core-rf-4")).toEqual([]);
    const corrected = await refund("core-rf-4", paymentId, "10.00");
    expect(corrected.status).toBe(201);
    expect(await transfersLike("api:core-rf-4:%")).toEqual([{ transfer_key: "api:core-rf-4:refund", kind: "refund" }]);
  });

  it("never lets 16 concurrent refunds of one payment exceed it, and every balance equals the sum of its entries after", async () => {
    const paymentId = await pay("core-pay-5", "10.00");
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => refund(`core-rf-5-${i}`, paymentId, "1.00")));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(10);
    expect(answers.filter((a) => a.status !== 201).map((a) => a.json.code)).toEqual(Array(6).fill("refund_exceeds_payment"));
    expect(await undoneOf("api:core-pay-5")).toBe("1000");
    expect(await transfersLike("api:core-rf-5-%")).toHaveLength(10);
    for (const account of ["alice", "bob"]) {
      const sums = await entrySums(db.pool, world.tenantId, account);
      const balance = (await world.client.get(`/v1/accounts/${account}/balance`)).json.balance as string;
      expect(BigInt(balance.replace(".", ""))).toBe(sums.creditsMinor - sums.debitsMinor);
    }
    const report = await verifyLedger(db.pool);
    expect(report.problems).toEqual([]);
  });

  it("declines a refund the payment's creditor cannot cover: nothing posted, the key rejected, the refund stored as declined", async () => {
    const paymentId = await pay("core-pay-6", "10.00");
    const bobBalance = (await world.client.get("/v1/accounts/bob/balance")).json.balance as string;
    // bob spends all he has, so he cannot give the 10.00 back.
    expect((await world.client.post("/v1/payments", { client_reference: "core-bob-spends", amount: bobBalance, currency: "USD", debtor_account: "bob", creditor_account: "alice" }, { "idempotency-key": randomUUID() })).status).toBe(201);
    const before = await transferCount();
    const declined = await refund("core-rf-6", paymentId, "10.00");
    expect(declined.status).toBe(422);
    expect(declined.json).toMatchObject({ code: "insufficient_funds", refund_id: expect.stringMatching(/^ref_/) });
    expect(await transferCount()).toBe(before);
    expect((await keyOf("api-refund:core-rf-6")).map((k) => [k.state, k.transfer_key])).toEqual([["rejected", null]]);
    expect(await undoneOf("api:core-pay-6")).toBe("0");
    const stored = await db.pool.query("SELECT status, decline_code FROM refund WHERE tenant_id = $1 AND client_reference = 'core-rf-6'", [world.tenantId]);
    expect(stored.rows).toEqual([{ status: "declined", decline_code: "insufficient_funds" }]);
  });

  it("refuses a refund of a declined payment as payment_not_refundable, claiming no key", async () => {
    const declined = await world.client.post("/v1/payments", paymentRequest("core-pay-7", "100000.00"), { "idempotency-key": randomUUID() });
    expect(declined.json.code).toBe("insufficient_funds");
    const refused = await refund("core-rf-7", declined.json.payment_id, "1.00");
    expect(refused.status).toBe(422);
    expect(refused.json.code).toBe("payment_not_refundable");
    expect(await keyOf("api-refund:core-rf-7")).toEqual([]);
  });

  it("clearline record show lists a refund's arrival and its transfer, and the payment's history lists its refunds", async () => {
    const paymentId = await pay("core-pay-8", "20.00");
    expect((await refund("core-rf-8", paymentId, "3.00")).status).toBe(201);
    const env = { DATABASE_URL: db.url, CLEARLINE_HOME: mkdtempSync(path.join(tmpdir(), "clearline-refund-")) };
    const own = JSON.parse((await runCliInProcess(["record", "show", "api-refund:core-rf-8", "--json"], env)).stdout);
    expect(own.events.filter((e: { type: string }) => e.type === "arrival").map((e: { natural_key: string; outcome: string; detail: string | null }) => [e.natural_key, e.outcome, e.detail]))
      .toEqual([["api-refund:core-rf-8", "applied", "undid part of api:core-pay-8"]]);
    expect(own.transfers.map((t: { transfer_key: string }) => t.transfer_key)).toEqual(["api:core-rf-8:refund"]);
    const payment = JSON.parse((await runCliInProcess(["record", "show", "api:core-pay-8", "--json"], env)).stdout);
    expect(payment.records.map((r: { natural_key: string; linked_to: string | null }) => [r.natural_key, r.linked_to])).toEqual([["api:core-pay-8", null], ["api-refund:core-rf-8", "api:core-pay-8"]]);
    expect(payment.transfers.map((t: { transfer_key: string }) => t.transfer_key).sort()).toEqual(["api:core-pay-8:debit", "api:core-rf-8:refund"]);
  });
});

/**
 * Migration 0019 gives HTTP payments and refunds from before the record core the marks the core
 * writes: a refund of an older payment finds it, counts what older refunds took, and a repeat of
 * an older refund is a duplicate. The earlier schema is made by dropping 0019's column again.
 */
describe("payments and refunds from before the record core (migration 0019)", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  beforeAll(async () => {
    db = await createTestDatabase();
    world = await givenApiWorld(db.pool, "refund-backfill");
    await fund(world.client, "alice", "100.00");
  });
  afterAll(async () => {
    await world.api.close();
    await db.drop();
  });

  it("backfills the marks with the normalizer's fingerprints and what was refunded, so older refunds count and repeat as duplicates", async () => {
    const paid = await world.client.post("/v1/payments", paymentRequest("old-pay", "10.00"), { "idempotency-key": randomUUID() });
    expect((await world.client.post("/v1/refunds", { client_reference: "old-rf", payment_id: paid.json.id, amount: "4.00" }, { "idempotency-key": randomUUID() })).status).toBe(201);
    const marks = `SELECT natural_key, fingerprint, state, transfer_key, matched_key,
                     undone_minor::text FROM record_key WHERE tenant_id = $1
                     AND natural_key IN ('api:old-pay', 'api-refund:old-rf') ORDER BY natural_key`;
    const written = (await db.pool.query(marks, [world.tenantId])).rows;
    // The database as before the record core took refunds: no undone_minor, no marks for these two.
    // The old table name's view (migration 0030) holds every column: it goes while the column does.
    await db.pool.query("DROP VIEW ingest_record_key");
    await db.pool.query("ALTER TABLE record_key DROP COLUMN undone_minor");
    await db.pool.query(
      `DELETE FROM record_key WHERE tenant_id = $1 AND natural_key IN ('api:old-pay',
         'api-refund:old-rf')`,
      [world.tenantId]);
    await db.pool.query(migrationSqlOnTodaysTables("0019_undone_of_record.sql"));
    await db.pool.query("CREATE VIEW ingest_record_key AS SELECT * FROM record_key");
    expect((await db.pool.query(marks, [world.tenantId])).rows).toEqual(written);
    const repeat = await world.client.post("/v1/refunds", { client_reference: "old-rf", payment_id: paid.json.id, amount: "4.00" }, { "idempotency-key": randomUUID() });
    expect(repeat.json.code).toBe("duplicate_client_reference");
    const tooMuch = await world.client.post("/v1/refunds", { client_reference: "new-rf", payment_id: paid.json.id, amount: "6.01" }, { "idempotency-key": randomUUID() });
    expect(tooMuch.json).toMatchObject({ code: "refund_exceeds_payment", refundable_minor: "600" });
  });
});
