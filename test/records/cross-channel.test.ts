import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addAccountAlias, createPartner } from "../../src/partners/partners.ts";
import { identityFingerprintOf } from "../../src/normalize/cross-channel-keys.ts";
import { httpPaymentRecord } from "../../src/normalize/from-http.ts";
import { recordHistory } from "../../src/records/index.ts";
import { fund, givenApiWorld, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";
import { runCliInProcess } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { ingest, type Scene } from "../files/support.ts";
import { pacs008 } from "./support.ts";

// bob's account is known to the partner's files by this IBAN.
const BOB_IBAN = "GB29NWBK60161331926819";

describe("one payment across channels: HTTP and a partner's file (protocols/identity/cross-channel-keys.json)", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  let scene: Scene;
  const transfers = async () => (await db.pool.query<{ transfer_key: string }>("SELECT transfer_key FROM transfer WHERE tenant_id = $1 ORDER BY transfer_key", [world.tenantId])).rows.map((r) => r.transfer_key);
  const balanceOf = async (account: string) => (await world.client.get(`/v1/accounts/${account}/balance`)).json.balance;

  beforeAll(async () => {
    db = await createTestDatabase();
    world = await givenApiWorld(db.pool, "cross");
    await fund(world.client, "alice", "500.00");
    const partner = await createPartner(db.pool, world.tenantId, "bank");
    if (!partner.ok) throw new Error(partner.error.message);
    scene = { tenantId: world.tenantId, partner: partner.value };
    await addAccountAlias(db.pool, world.tenantId, `iban:${BOB_IBAN}`, "bob");
  });
  afterAll(async () => {
    await world.api.close();
    await db.drop();
  });

  it("posts a payment that arrived by HTTP and again in a pacs.008 with its end-to-end reference, amount and creditor once: the file's record is a duplicate linked to it", async () => {
    const posted = await world.client.post("/v1/payments", paymentRequest("order-7001", "25.00"), { "idempotency-key": randomUUID() });
    expect(posted.status).toBe(201);
    const before = await transfers();
    const report = await ingest(db.pool, scene, pacs008({ msgId: "CC-1", endToEndId: "order-7001", amount: "25.00", creditorIban: BOB_IBAN }), "cc-1.xml");
    expect(report.outcomes).toMatchObject({ applied: 0, duplicate: 1 });
    expect(await transfers()).toEqual(before);
    expect(await balanceOf("bob")).toBe("25.00");
    const { rows } = await db.pool.query(
      `SELECT outcome, code, original_ref FROM record_outcome WHERE tenant_id = $1
         AND file_id = $2`,
      [world.tenantId, report.file_id]);
    expect(rows).toEqual([{ outcome: "duplicate", code: "RECORD_SAME_PAYMENT", original_ref: "api:order-7001:debit" }]);
  });

  it("gives both arrivals the one payment identity, and the identity the fingerprint of amount, currency and creditor", async () => {
    const { rows } = await db.pool.query<{ channel: string; identity_key: string; state: string; matched_key: string | null }>(
      `SELECT channel, identity_key, state, matched_key FROM record_key WHERE tenant_id = $1
         AND identity_key = 'e2e:order-7001' ORDER BY channel`, [world.tenantId]);
    expect(rows).toEqual([
      { channel: "http", identity_key: "e2e:order-7001", state: "applied", matched_key: null },
      { channel: "iso20022", identity_key: "e2e:order-7001", state: "applied", matched_key: "api:order-7001" },
    ]);
    const identity = await db.pool.query("SELECT natural_key, fingerprint FROM record_identity WHERE tenant_id = $1 AND identity_key = 'e2e:order-7001'", [world.tenantId]);
    expect(identity.rows).toEqual([{ natural_key: "api:order-7001", fingerprint: identityFingerprintOf({ amount: 2500n, currency: "USD" }, "bob") }]);
  });

  it("keys and fingerprints the HTTP payment as the core's API normalizer does", async () => {
    const payment = {
      clientReference: "order-7001", amountMinor: 2500n, currency: "USD", debtorAccount: "alice",
      creditorAccount: "bob",
    };
    const arrival = { position: "", sourceRef: "", valueDate: "2026-12-03" };
    const expected = httpPaymentRecord(world.tenantId, payment, arrival).record;
    const { rows } = await db.pool.query(
      `SELECT natural_key, fingerprint FROM record_key WHERE tenant_id = $1
         AND natural_key = 'api:order-7001'`,
      [world.tenantId]);
    expect(rows).toEqual([{ natural_key: expected?.naturalKey, fingerprint: expected?.fingerprint }]);
  });

  it("clearline record show lists both arrivals of that payment and its one transfer", async () => {
    const env = { DATABASE_URL: db.url, CLEARLINE_HOME: mkdtempSync(path.join(tmpdir(), "clearline-record-")) };
    const shown = await runCliInProcess(["record", "show", "api:order-7001", "--json"], env);
    expect(shown.exitCode).toBe(0);
    const history = JSON.parse(shown.stdout);
    expect(history.events.filter((e: { type: string }) => e.type === "arrival").map((e: { channel: string; outcome: string }) => [e.channel, e.outcome]))
      .toEqual([["http", "applied"], ["file", "duplicate"]]);
    expect(history.transfers.map((t: { transfer_key: string }) => t.transfer_key)).toEqual(["api:order-7001:debit"]);
    const text = await runCliInProcess(["record", "show", "e2e:order-7001"], env);
    expect(text.stdout).toContain("RECORD_SAME_PAYMENT");
    expect(text.stdout).toContain("transfers: 1");
  });

  it("answers GET /v1/records/{key} with the same history, and 404 record_not_found for a key nobody sent", async () => {
    const history = await world.client.get("/v1/records/api:order-7001");
    expect(history.status).toBe(200);
    expect(history.json.records.map((r: { natural_key: string }) => r.natural_key)).toEqual(["api:order-7001", expect.stringMatching(/^iso20022:/)]);
    expect((await world.client.get("/v1/records/api:nobody")).json.code).toBe("record_not_found");
  });

  it("refuses an HTTP payment whose reference a partner's file already brought, 409 payment_arrived_by_other_channel, posting nothing", async () => {
    await ingest(db.pool, scene, pacs008({ msgId: "CC-2", endToEndId: "order-7002", amount: "30.00", creditorIban: BOB_IBAN }), "cc-2.xml");
    const before = await transfers();
    const response = await world.client.post("/v1/payments", paymentRequest("order-7002", "30.00"), { "idempotency-key": randomUUID() });
    expect(response.status).toBe(409);
    expect(response.json).toMatchObject({ code: "payment_arrived_by_other_channel", natural_key: "api:order-7002" });
    expect(await transfers()).toEqual(before);
    const again = await world.client.post("/v1/payments", paymentRequest("order-7002", "30.00"), { "idempotency-key": randomUUID() });
    expect(again.json.code).toBe("payment_arrived_by_other_channel");
  });

  it("holds a file record with a known end-to-end reference but another amount for a person, posting nothing", async () => {
    await world.client.post("/v1/payments", paymentRequest("order-7003", "40.00"), { "idempotency-key": randomUUID() });
    const before = await transfers();
    const report = await ingest(db.pool, scene, pacs008({ msgId: "CC-3", endToEndId: "order-7003", amount: "41.00", creditorIban: BOB_IBAN }), "cc-3.xml");
    expect(report.outcomes).toMatchObject({ applied: 0, conflict: 1 });
    expect(await transfers()).toEqual(before);
    const { rows } = await db.pool.query(
      `SELECT reason, matched_ref, state FROM record_review WHERE tenant_id = $1 AND file_id = $2`,
      [world.tenantId, report.file_id]);
    expect(rows).toEqual([{ reason: "conflict", matched_ref: "api:order-7003", state: "open" }]);
  });

  it("never matches two records of one channel by end-to-end reference: their own natural keys decide", async () => {
    const first = await ingest(db.pool, scene, pacs008({ msgId: "CC-4", endToEndId: "INV-1", amount: "5.00", creditorIban: BOB_IBAN }), "cc-4.xml");
    // Another amount: the same content from another file would be a suspect, which is another rule.
    const second = await ingest(db.pool, scene, pacs008({ msgId: "CC-5", endToEndId: "INV-1", amount: "6.00", creditorIban: BOB_IBAN }), "cc-5.xml");
    expect([first.outcomes.applied, second.outcomes.applied]).toEqual([1, 1]);
  });

  it("reads a mark stored under the HTTP channel's old name, api, as http", async () => {
    const paid = await world.client.post(
      "/v1/payments", paymentRequest("order-7009", "1.00"), { "idempotency-key": randomUUID() });
    expect(paid.status).toBe(201);
    for (const table of ["record_key", "record_identity"]) {
      await db.pool.query(
        `UPDATE ${table} SET channel = 'api'
          WHERE tenant_id = $1 AND natural_key = 'api:order-7009'`,
        [world.tenantId]);
    }
    const history = await recordHistory(db.pool, world.tenantId, "api:order-7009");
    expect(history?.records.map((r) => r.channel)).toEqual(["http"]);
    const arrivals = history?.events.filter((e) => e.type === "arrival");
    expect(arrivals?.map((e) => (e.type === "arrival" ? e.channel : ""))).toEqual(["http"]);
    const file = pacs008({
      msgId: "CC-9", endToEndId: "order-7009", amount: "1.00", creditorIban: BOB_IBAN,
    });
    const report = await ingest(db.pool, scene, file, "cc-9.xml");
    expect(report.outcomes).toMatchObject({ applied: 0, duplicate: 1 });
  });
});
