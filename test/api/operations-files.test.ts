import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addAccountAlias, createPartner } from "../../src/partners/partners.ts";
import { givenApiWorld, type ApiWorld } from "../support/api-scenario.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenOperator, signIn, type OpsClient } from "../support/ops-client.ts";
import { fixture, PAYEE_TWO_KEY } from "../files/support.ts";

describe("files for operators: list, show, re-upload preview then confirm", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  let other: ApiWorld;
  let ann: OpsClient;
  let vera: OpsClient;
  let olaf: OpsClient;
  beforeAll(async () => {
    db = await createTestDatabase();
    world = await givenApiWorld(db.pool, "ops-files");
    other = await givenApiWorld(db.pool, "ops-files-other");
    const partner = await createPartner(db.pool, world.tenantId, "fedach");
    if (!partner.ok) throw new Error(partner.error.message);
    await world.client.post("/v1/accounts", { id: "payee-two", kind: "customer", currency: "USD" });
    await addAccountAlias(db.pool, world.tenantId, "aba:021000021:1000002", "payee-two");
    ann = await signIn(world.api.baseUrl, "ops-files", "ann", await givenOperator(db.pool, world.tenantId, "ann", "approver"));
    vera = await signIn(world.api.baseUrl, "ops-files", "vera", await givenOperator(db.pool, world.tenantId, "vera", "viewer"));
    olaf = await signIn(other.api.baseUrl, "ops-files-other", "olaf", await givenOperator(db.pool, other.tenantId, "olaf", "admin"));
  });
  afterAll(async () => {
    await world.api.close();
    await other.api.close();
    await db.drop();
  });

  const upload = (client: OpsClient, path: string, file: string, headers: Record<string, string> = {}) =>
    client.mutate("POST", `${path}?name=${file.split("/").pop()}`, fixture(file).toString("latin1"), { "content-type": "application/octet-stream", ...headers });

  it("uploads the original with an Idempotency-Key and lists it; the key's repeat answers the same file", async () => {
    const first = await upload(ann, "/v1/ops/files", "ach/original.ach", { "idempotency-key": "upload-original" });
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({ status: "done" });
    const again = await upload(ann, "/v1/ops/files", "ach/original.ach", { "idempotency-key": "upload-original" });
    expect(again.status).toBe(201);   // the first answer's status and body (200 before issue 33 item 6)
    expect(again.text).toBe(first.text);
    const files = (await vera.get("/v1/ops/files")).json.files as Array<{ file_id: string }>;
    expect(files.map((file) => file.file_id)).toEqual([first.json.file_id]);
    expect((await vera.get(`/v1/ops/files/${first.json.file_id}`)).json.record_outcomes).toHaveLength(5);
    expect((await olaf.get("/v1/ops/files")).json.files).toEqual([]);
    expect((await olaf.get(`/v1/ops/files/${first.json.file_id}`)).status).toBe(404);
  });

  it("previews the corrected file without storing anything: 1 new, 3 already applied, 1 changed with 200.00 and 205.00", async () => {
    const before = await db.pool.query(
      `SELECT count(*)::int AS n FROM received_file WHERE tenant_id = $1`, [world.tenantId]);
    const preview = await upload(ann, "/v1/ops/files/preview", "ach/corrected.ach");
    expect(preview.status).toBe(200);
    expect(preview.json.verdicts).toEqual({ new: 1, already_applied: 3, changed: 1, suspect: 0, rejected: 0 });
    expect(preview.json.records_listed).toContainEqual(expect.objectContaining({ natural_key: PAYEE_TWO_KEY, verdict: "changed", original_amount_minor: "20000", amount_minor: "20500" }));
    const after = await db.pool.query(
      `SELECT count(*)::int AS n FROM received_file WHERE tenant_id = $1`, [world.tenantId]);
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it("refuses a viewer's preview and upload, and an upload without the CSRF token", async () => {
    expect((await upload(vera, "/v1/ops/files/preview", "ach/corrected.ach")).status).toBe(403);
    expect((await upload(vera, "/v1/ops/files", "ach/corrected.ach")).status).toBe(403);
    expect((await upload(ann, "/v1/ops/files", "ach/corrected.ach", { "x-csrf-token": "forged" })).json).toMatchObject({ code: "operator_csrf_refused" });
  });

  it("confirms the corrected file: the changed record is held for review, nothing else posted twice", async () => {
    const confirmed = await upload(ann, "/v1/ops/files", "ach/corrected.ach");
    expect(confirmed.status).toBe(201);
    expect((await ann.get("/v1/ops/reviews")).json.reviews).toMatchObject([{ natural_key: PAYEE_TWO_KEY, amount_minor: "20500", state: "open" }]);
    expect((await world.client.get("/v1/accounts/payee-two/balance")).json).toMatchObject({ balance: "200.00" });
  });
});
