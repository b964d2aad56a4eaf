import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAccount } from "../../src/ledger/index.ts";
import { addAccountAlias } from "../../src/partners/partners.ts";
import { fileOutcomes, fileReport } from "../../src/files/report.ts";
import { listSuspensePostings, recordHistory } from "../../src/records/index.ts";
import { post, transferOf } from "../support/ledger-fixtures.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fixture, givenScene, ingest, settlementOf, type Scene } from "./support.ts";

/**
 * Rows written before migration 0028 hold the INGEST_ names of renamed codes (docs/decisions/0068):
 * the migration rewrites none of them, so every reader takes an old name as the code it became.
 * Each test makes its rows look old by writing the old name back.
 */
describe("codes stored under their names before the rename", () => {
  let db: TestDatabase;
  let scene: Scene;
  let unresolvedFile: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    scene = await givenScene(db.pool, "renamed-codes");
    const report = await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    unresolvedFile = report.file_id;
    await db.pool.query(
      `UPDATE record_outcome SET code = 'INGEST_COUNTERPARTY_UNRESOLVED'
        WHERE tenant_id = $1 AND code = 'RECORD_COUNTERPARTY_UNRESOLVED'`, [scene.tenantId]);
  });
  afterAll(async () => {
    await db.drop();
  });

  it("reports a file's outcomes under the codes' names now", async () => {
    const codes = (await fileOutcomes(db.pool, scene.tenantId, unresolvedFile)).map((o) => o.code);
    expect(codes).toEqual(Array(5).fill("RECORD_COUNTERPARTY_UNRESOLVED"));
  });

  it("lists the records posted to suspense under either name of their code", async () => {
    expect(await listSuspensePostings(db.pool, { tenantId: scene.tenantId })).toHaveLength(5);
  });

  it("shows a record's arrival in its history under the code's name now", async () => {
    const [unresolved] = (await fileOutcomes(db.pool, scene.tenantId, unresolvedFile))
      .filter((o) => o.code !== null);
    const history = await recordHistory(db.pool, scene.tenantId, unresolved?.natural_key ?? "");
    const arrival = history?.events.find((event) => event.type === "arrival");
    expect(arrival).toMatchObject({ code: "RECORD_COUNTERPARTY_UNRESOLVED" });
  });

  it("reports a rejected record and a file's finding under the codes' names now", async () => {
    const funds = await givenScene(db.pool, "renamed-codes-funds");
    const tenantId = funds.tenantId;
    const turing = { tenantId, accountId: "turing", kind: "customer", currency: "USD" } as const;
    await openAccount(db.pool, turing);
    await addAccountAlias(db.pool, tenantId, "aba:021000021:9876543", "turing");
    await post(db.pool, transferOf(tenantId, "seed", settlementOf(funds), "turing", 50_000n));
    const refused = await ingest(db.pool, funds, fixture("ach/base-valid.ach"), "base.ach");
    await db.pool.query(
      `UPDATE record_outcome SET code = 'INGEST_INSUFFICIENT_FUNDS'
        WHERE tenant_id = $1 AND file_id = $2 AND outcome = 'rejected'`,
      [tenantId, refused.file_id]);
    const finding = {
      code: "INGEST_KEY_REUSED_IN_FILE", severity: "warning", message: "reused", position: {},
    };
    await db.pool.query(
      "UPDATE received_file SET findings = $3::jsonb WHERE tenant_id = $1 AND file_id = $2",
      [tenantId, refused.file_id, JSON.stringify([finding])]);
    const report = await fileReport(db.pool, tenantId, refused.file_id);
    expect(report?.errors.map((e) => e.code)).toEqual(["RECORD_INSUFFICIENT_FUNDS"]);
    expect(report?.warnings.map((w) => w.code)).toEqual(["RECORD_KEY_REUSED_IN_FILE"]);
  });
});
