import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerReconciliationRoutes } from "../../src/api/routes/reconciliations.ts";
import { ApiClient } from "../support/api-client.ts";
import { givenTenant, startTestApi, type TestApi } from "../support/api-server.ts";
import { runCliInProcess } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";
import { camt053 } from "./statements.ts";

describe("reconciliation through the CLI and the HTTP API", () => {
  let db: TestDatabase;
  let api: TestApi;
  let client: ApiClient;
  let tenantId: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi(db.pool, [(app) => registerReconciliationRoutes(app, { pool: db.pool })]);
    const tenant = await givenTenant(db.pool, "recon-api");
    tenantId = tenant.tenantId;
    client = new ApiClient(api.baseUrl, tenant.apiKey);
    await givenAccounts(db.pool, tenantId, [["settlement", "settlement"], ["alice", "customer"]]);
    await post(db.pool, transferOf(tenantId, "WIRE-1", "settlement", "alice", 5_000n, { valueDate: "2026-12-01" }));
  });
  afterAll(async () => {
    await api.close();
    await db.drop();
  });

  it("imports, runs, shows and corrects over HTTP; a correction asked twice answers the same", async () => {
    const statement = camt053({ id: "H1", entries: [{ amount: "50.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "WIRE-1" }, { amount: "12.00", date: "2026-12-01", svcrRef: "B2" }] });
    const xml = { "content-type": "application/xml" };
    const imported = await client.send("POST", "/v1/reconciliations/imports?account=settlement&name=h1.xml", statement.toString("utf8"), { ...xml, "idempotency-key": "import-h1" });
    expect(imported.status, imported.text + api.logs.join("")).toBe(201);
    expect(imported.json).toMatchObject({ items: 2, already_imported: false });
    expect((await client.send("POST", "/v1/reconciliations/imports?account=settlement", statement.toString("utf8"), { ...xml, "idempotency-key": "import-h1-again" })).status).toBe(200);

    const run = await client.post("/v1/reconciliations/runs", { account: "settlement", from: "2026-12-01", to: "2026-12-01" }, { "idempotency-key": "run-1" });
    expect(run.status).toBe(201);
    expect(run.json).toMatchObject({ matched: 1, differences: { theirs_only: 1, ours_only: 0 } });
    const shown = await client.get(`/v1/reconciliations/runs/${run.json.run_id}`);
    expect(shown.json.results[0]).toMatchObject({ outcome: "theirs_only", item_keys: ["svcr:B2"] });

    const differenceId = shown.json.results[0].difference_id;
    const decision = { reason: "bank fee refund without advice", operator: "ops-2" };
    const path = `/v1/reconciliations/differences/${differenceId}`;
    const first = await client.post(`${path}/correct`, decision, { "idempotency-key": "correct-1" });
    const second = await client.post(`${path}/correct`, decision, { "idempotency-key": "correct-2" });
    expect(first.status).toBe(200);
    expect(second.json).toEqual(first.json);
    expect((await client.post(`${path}/explain`, decision, { "idempotency-key": "explain-1" })).json.code).toBe("recon_difference_decided");
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM transfer WHERE tenant_id = $1 AND kind = 'recon_correction'", [tenantId]);
    expect(rows[0].n).toBe(1);
  });

  it("keeps the idempotency contract on every reconciliation mutation: a repeat of the key is "
    + "answered with the stored status and body, another key by the thing's own identity, no key "
    + "is refused (regression: a run sent twice answered 201, then 200 already_run)", async () => {
    const statement = camt053({ id: "H2", entries: [{ amount: "7.00", date: "2026-12-04", svcrRef: "C1" }] });
    const xml = { "content-type": "application/xml" };
    const importPath = "/v1/reconciliations/imports?account=settlement&name=h2.xml";
    const once = client.singleSend();
    const imports = [];
    for (const key of ["import-h2", "import-h2"]) {
      imports.push(await once.send("POST", importPath, statement.toString("utf8"), { ...xml, "idempotency-key": key }));
    }
    expect(imports.map((r) => r.status)).toEqual([201, 201]);
    expect(imports[1]?.text).toBe(imports[0]?.text);
    expect(imports[1]?.headers.get("idempotent-replayed")).toBe("true");

    const body = { account: "settlement", from: "2026-12-04", to: "2026-12-04" };
    const runs = [];
    for (const key of ["run-h2", "run-h2", "run-h2-other"]) {
      runs.push(await once.post("/v1/reconciliations/runs", body, { "idempotency-key": key }));
    }
    expect(runs.map((r) => r.status)).toEqual([201, 201, 200]);
    expect(runs[1]?.text).toBe(runs[0]?.text);
    expect(runs[1]?.headers.get("idempotent-replayed")).toBe("true");
    expect(runs[2]?.json).toMatchObject({ run_id: runs[0]?.json.run_id, already_run: true });
    expect((await once.post("/v1/reconciliations/runs", { ...body, to: "2026-12-05" }, { "idempotency-key": "run-h2" })).json.code).toBe("idempotency_key_reuse");
    expect((await once.post("/v1/reconciliations/runs", body)).status).toBe(400);

    const differenceId = (await client.get(`/v1/reconciliations/runs/${runs[0]?.json.run_id}`)).json.results[0].difference_id;
    const decision = { reason: "bank interest", operator: "ops-2" };
    const explained = [];
    for (const key of ["explain-h2", "explain-h2"]) {
      explained.push(await once.post(`/v1/reconciliations/differences/${differenceId}/explain`, decision, { "idempotency-key": key }));
    }
    expect(explained.map((r) => r.status)).toEqual([200, 200]);
    expect(explained[1]?.text).toBe(explained[0]?.text);
    expect((await once.post(`/v1/reconciliations/differences/${differenceId}/explain`, decision)).status).toBe(400);
  });

  it("prints { run_id, matched, differences } from clearline recon run --json, and refuses a bad period with exit 2", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "clearline-recon-cli-"));
    const file = path.join(dir, "items.csv");
    writeFileSync(file, "id,date,amount,currency,reference,description\nc1,2026-12-02,9.00,USD,NOPE,unknown wire\n");
    const env = { DATABASE_URL: db.url };
    const imported = await runCliInProcess(["recon", "import", file, "--tenant", "recon-api", "--account", "settlement", "--json"], env);
    expect(imported.exitCode).toBe(0);
    const run = await runCliInProcess(["recon", "run", "--tenant", "recon-api", "--account", "settlement", "--from", "2026-12-02", "--to", "2026-12-02", "--json"], env);
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ run_id: expect.stringMatching(/^rrn_/), matched: 0, differences: { theirs_only: 1 } });
    const bad = await runCliInProcess(["recon", "run", "--tenant", "recon-api", "--account", "settlement", "--from", "2026-12-03", "--to", "2026-12-01"], env);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("RECON_PERIOD_INVALID");
  });
});
