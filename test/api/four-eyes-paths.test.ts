import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerReconciliationRoutes } from "../../src/api/routes/reconciliations.ts";
import { addAccountAlias, createPartner } from "../../src/partners/partners.ts";
import { listReviews } from "../../src/records/review-queue.ts";
import { setFourEyesAboveMinor } from "../../src/operators/operators.ts";
import { importExternalFile } from "../../src/recon/external-items.ts";
import { listOpenDifferences } from "../../src/recon/differences.ts";
import { runReconciliation } from "../../src/recon/runs.ts";
import { ApiClient } from "../support/api-client.ts";
import { fund } from "../support/api-scenario.ts";
import { givenTenant, startTestApi, type TestApi } from "../support/api-server.ts";
import { runCliInProcess } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenOperator, signIn } from "../support/ops-client.ts";
import { fixture, ingest } from "../files/support.ts";

const today = () => new Date().toISOString().slice(0, 10);

/**
 * The API key and the CLI do not bypass four eyes (docs/decisions/0035): above the tenant's
 * four-eyes amount a review decision or a reconciliation correction made through them becomes a
 * proposal by the operator they name, which another approver approves in /v1/ops.
 */
describe("four eyes on the API-key and CLI paths", () => {
  let db: TestDatabase;
  let api: TestApi;
  let client: ApiClient;
  let tenantId: string;
  const secrets: Record<string, string> = {};
  const env = () => ({ DATABASE_URL: db.url });
  /** The environment of a CLI command run by operator `name` of `tenantName`, who gives their secret (0066). */
  const envAs = (tenantName: string, name: string) => ({ ...env(), CLEARLINE_OPERATOR_SECRET: secrets[tenantName === "paths" ? name : `${tenantName}/${name}`] ?? "" });

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi(db.pool, [(app) => registerReconciliationRoutes(app, { pool: db.pool })]);
    const tenant = await givenTenant(db.pool, "paths");
    tenantId = tenant.tenantId;
    client = new ApiClient(api.baseUrl, tenant.apiKey);
    for (const [id, kind] of [["settlement", "settlement"], ["alice", "customer"]] as const) {
      await client.post("/v1/accounts", { id, kind, currency: "USD" });
    }
    for (const [name, role] of [["sam", "approver"], ["tom", "approver"], ["val", "viewer"]] as const) secrets[name] = await givenOperator(db.pool, tenantId, name, role);
    await setFourEyesAboveMinor(db.pool, tenantId, 10_000n);
  });
  afterAll(async () => {
    await api.close();
    await db.drop();
  });

  /**
   * The quickstart's conflict (205.00 for payee two, held) in a tenant of its own (a record's key
   * is held once per tenant), with the same operators and four-eyes amount; answers its review id
   * and its API client.
   */
  async function givenHeldConflict(name: string): Promise<{ reviewId: string; tenant: { id: string; name: string; client: ApiClient } }> {
    const created = await givenTenant(db.pool, name);
    const tenantClient = new ApiClient(api.baseUrl, created.apiKey);
    for (const [id, kind] of [["settlement", "settlement"], ["payee-two", "customer"]] as const) await tenantClient.post("/v1/accounts", { id, kind, currency: "USD" });
    for (const [operator, role] of [["sam", "approver"], ["tom", "approver"], ["val", "viewer"]] as const) secrets[`${name}/${operator}`] = await givenOperator(db.pool, created.tenantId, operator, role);
    await setFourEyesAboveMinor(db.pool, created.tenantId, 10_000n);
    const partner = await createPartner(db.pool, created.tenantId, "fedach");
    if (!partner.ok) throw new Error(partner.error.message);
    await addAccountAlias(db.pool, created.tenantId, "aba:021000021:1000002", "payee-two");
    const scene = { tenantId: created.tenantId, partner: partner.value };
    await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected.ach");
    const [held] = await listReviews(db.pool, { tenantId: created.tenantId });
    if (!held) throw new Error("nothing held");
    return { reviewId: held.review_id, tenant: { id: created.tenantId, name, client: tenantClient } };
  }

  /** A settlement day with one unknown bank credit of `amount` (theirs_only). */
  async function givenTheirsOnly(amount: string): Promise<string> {
    await fund(client, "alice", "1.00");
    const reference = randomUUID();
    const csv = `id,date,amount,currency,reference,description\n${reference},${today()},${amount},USD,${reference},unknown wire\n`;
    const imported = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: `${reference}.csv`, content: Buffer.from(csv), format: "csv" });
    if (!imported.ok) throw new Error(imported.error.map((f) => f.message).join("; "));
    const run = await runReconciliation(db.pool, { tenantId, accountId: "settlement", from: today(), to: today() });
    if (!run.ok) throw new Error(run.error.message);
    const difference = (await listOpenDifferences(db.pool, tenantId, "settlement", 100)).find((d) => d.reason === "theirs_only" && d.itemKeys.some((key) => key.includes(reference)));
    if (!difference) throw new Error("no theirs_only difference");
    return difference.differenceId;
  }

  const count = async (sql: string, tenant: string, ...params: unknown[]) => (await db.pool.query<{ n: number }>(sql, [tenant, ...params])).rows[0]?.n ?? -1;
  const compensations = (tenant: string) => count("SELECT count(*)::int AS n FROM transfer WHERE tenant_id = $1 AND kind = 'correction-compensation'", tenant);
  const corrections = () => count("SELECT count(*)::int AS n FROM transfer WHERE tenant_id = $1 AND kind = 'recon_correction'", tenantId);
  const proposalsOn = (tenant: string, subject: string) => count("SELECT count(*)::int AS n FROM decision_proposal WHERE tenant_id = $1 AND subject_id = $2", tenant, subject);
  const approveAs = async (tenantName: string, name: string, proposalId: string) => {
    const secret = secrets[tenantName === "paths" ? name : `${tenantName}/${name}`] ?? "";
    return (await signIn(api.baseUrl, tenantName, name, secret)).mutate("POST", `/v1/ops/proposals/${proposalId}/approval`, {});
  };
  const reviewState = async (tenant: string, reviewId: string) => (await listReviews(db.pool, { tenantId: tenant, state: "all" })).find((r) => r.review_id === reviewId)?.state;

  it("turns an API-key review decision above the amount into a proposal by the named operator: 202, nothing posted, the review open", async () => {
    const { reviewId, tenant } = await givenHeldConflict("paths-api");
    const proposed = await tenant.client.post(`/v1/reviews/${reviewId}/decision`, { decision: "replace", reason: "partner confirmed 205.00", operator: "sam" }, { "idempotency-key": randomUUID() });
    expect(proposed.status).toBe(202);
    expect(proposed.json.proposal).toMatchObject({ subject_kind: "review", subject_id: reviewId, decision: "replace", proposed_by: "sam", proposed_via: "api_key", state: "open", amount_minor: "20500" });
    expect(await compensations(tenant.id)).toBe(0);
    expect(await reviewState(tenant.id, reviewId)).toBe("open");
    expect((await approveAs(tenant.name, "sam", proposed.json.proposal.proposal_id)).json).toMatchObject({ status: 403, code: "four_eyes_self_approval" });
    const approved = await approveAs(tenant.name, "tom", proposed.json.proposal.proposal_id);
    expect(approved.json).toMatchObject({ state: "replaced", operator: "sam approved by tom" });
    expect(await compensations(tenant.id)).toBe(1);
  });

  it("refuses an API-key review decision above the amount that names no approver of the tenant, and stores nothing", async () => {
    const { reviewId, tenant } = await givenHeldConflict("paths-api-unknown");
    for (const operator of ["somebody", "val"]) {
      const refused = await tenant.client.post(`/v1/reviews/${reviewId}/decision`, { decision: "refuse", reason: "not ours", operator }, { "idempotency-key": randomUUID() });
      expect(refused.json, operator).toMatchObject({ status: 422, code: "four_eyes_proposer_unknown" });
    }
    expect(await proposalsOn(tenant.id, reviewId)).toBe(0);
    expect(await reviewState(tenant.id, reviewId)).toBe("open");
  });

  it("refuses a CLI review decision above the amount without --operator, with exit 2 and nothing stored", async () => {
    const { reviewId, tenant } = await givenHeldConflict("paths-cli-none");
    const refused = await runCliInProcess(["review", "replace", reviewId, "--tenant", tenant.name, "--reason", "partner confirmed 205.00"], env());
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/FOUR_EYES_PROPOSER_REQUIRED: .*--operator NAME/);
    expect(await proposalsOn(tenant.id, reviewId)).toBe(0);
    expect(await reviewState(tenant.id, reviewId)).toBe("open");
  });

  it("does not let one shell user propose as one approver and approve as another: each CLI step above the amount needs that operator's secret (regression: --operator was only a name)", async () => {
    const { reviewId, tenant } = await givenHeldConflict("paths-cli-one-user");
    const asSam = { ...env(), CLEARLINE_OPERATOR_SECRET: secrets[`${tenant.name}/sam`] ?? "" };
    // No secret in the environment and no terminal to ask on: refused, nothing stored.
    const unsigned = await runCliInProcess(["review", "replace", reviewId, "--tenant", tenant.name, "--reason", "partner confirmed 205.00", "--operator", "sam"], env());
    expect([unsigned.exitCode, unsigned.stderr]).toEqual([2, expect.stringMatching(/OPERATOR_SECRET_REQUIRED: .*sam.*CLEARLINE_OPERATOR_SECRET/)]);
    expect(await proposalsOn(tenant.id, reviewId)).toBe(0);
    const proposed = await runCliInProcess(["review", "replace", reviewId, "--tenant", tenant.name, "--reason", "partner confirmed 205.00", "--operator", "sam", "--json"], asSam);
    expect(proposed.exitCode, proposed.stderr).toBe(0);
    const { proposal } = JSON.parse(proposed.stdout) as { proposal: { proposal_id: string } };
    // The same person, knowing only sam's secret, cannot approve as tom.
    const asTomWithSamsSecret = await runCliInProcess(["proposal", "approve", proposal.proposal_id, "--tenant", tenant.name, "--operator", "tom"], asSam);
    expect([asTomWithSamsSecret.exitCode, asTomWithSamsSecret.stderr]).toEqual([2, expect.stringMatching(/OPERATOR_SIGN_IN_FAILED/)]);
    expect(await compensations(tenant.id)).toBe(0);
    const asTom = { ...env(), CLEARLINE_OPERATOR_SECRET: secrets[`${tenant.name}/tom`] ?? "" };
    const approved = await runCliInProcess(["proposal", "approve", proposal.proposal_id, "--tenant", tenant.name, "--operator", "tom"], asTom);
    expect(approved.exitCode, approved.stderr).toBe(0);
    expect(await compensations(tenant.id)).toBe(1);
  });

  it("turns a CLI review decision above the amount into a proposal by --operator, which another approver approves in /v1/ops", async () => {
    const { reviewId, tenant } = await givenHeldConflict("paths-cli");
    const proposed = await runCliInProcess(["review", "replace", reviewId, "--tenant", tenant.name, "--reason", "partner confirmed 205.00", "--operator", "sam", "--json"], envAs(tenant.name, "sam"));
    expect(proposed.exitCode, proposed.stderr).toBe(0);
    const { proposal } = JSON.parse(proposed.stdout) as { proposal: { proposal_id: string } };
    expect(proposal).toMatchObject({ subject_id: reviewId, proposed_by: "sam", proposed_via: "cli", state: "open" });
    expect(await compensations(tenant.id)).toBe(0);
    expect((await approveAs(tenant.name, "tom", proposal.proposal_id)).json).toMatchObject({ state: "replaced", operator: "sam approved by tom" });
    expect(await compensations(tenant.id)).toBe(1);
  });

  it("lists and approves proposals from the CLI: never by the proposer, once, with the decision's own ledger meaning", async () => {
    const { reviewId, tenant } = await givenHeldConflict("paths-cli-approve");
    const proposed = await runCliInProcess(["review", "replace", reviewId, "--tenant", tenant.name, "--reason", "partner confirmed 205.00", "--operator", "sam", "--json"], envAs(tenant.name, "sam"));
    const { proposal } = JSON.parse(proposed.stdout) as { proposal: { proposal_id: string } };
    const listed = await runCliInProcess(["proposal", "list", "--tenant", tenant.name, "--json"], env());
    expect(JSON.parse(listed.stdout).proposals).toMatchObject([{ proposal_id: proposal.proposal_id, state: "open", proposed_by: "sam", proposed_via: "cli" }]);

    const bySelf = await runCliInProcess(["proposal", "approve", proposal.proposal_id, "--tenant", tenant.name, "--operator", "sam"], envAs(tenant.name, "sam"));
    expect(bySelf.exitCode).toBe(2);
    expect(bySelf.stderr).toMatch(/FOUR_EYES_SELF_APPROVAL/);
    const byViewer = await runCliInProcess(["proposal", "approve", proposal.proposal_id, "--tenant", tenant.name, "--operator", "val"], envAs(tenant.name, "val"));
    expect(byViewer.stderr).toMatch(/FOUR_EYES_PROPOSER_UNKNOWN: val is a viewer/);
    expect(await compensations(tenant.id)).toBe(0);

    const approved = await runCliInProcess(["proposal", "approve", proposal.proposal_id, "--tenant", tenant.name, "--operator", "tom"], envAs(tenant.name, "tom"));
    expect(approved.exitCode, approved.stderr).toBe(0);
    expect(approved.stdout).toMatch(new RegExp(`${proposal.proposal_id} approved: ${reviewId}: replaced by sam approved by tom: .* compensated by .*:compensate`));
    const again = await runCliInProcess(["proposal", "approve", proposal.proposal_id, "--tenant", tenant.name, "--operator", "tom"], envAs(tenant.name, "tom"));
    expect(again.stderr).toMatch(/PROPOSAL_DECIDED: .* is approved by tom/);
    expect(await compensations(tenant.id)).toBe(1);
    expect(await reviewState(tenant.id, reviewId)).toBe("replaced");
  });

  it("cancels an open proposal from the CLI with a reason: nothing moves and the review stays open", async () => {
    const { reviewId, tenant } = await givenHeldConflict("paths-cli-cancel");
    const proposed = await runCliInProcess(["review", "refuse", reviewId, "--tenant", tenant.name, "--reason", "not ours", "--operator", "sam", "--json"], envAs(tenant.name, "sam"));
    const { proposal } = JSON.parse(proposed.stdout) as { proposal: { proposal_id: string } };
    const cancelled = await runCliInProcess(["proposal", "cancel", proposal.proposal_id, "--tenant", tenant.name, "--operator", "tom", "--reason", "the partner is sending a new file", "--json"], envAs(tenant.name, "tom"));
    expect(cancelled.exitCode, cancelled.stderr).toBe(0);
    expect(JSON.parse(cancelled.stdout).proposal).toMatchObject({ state: "cancelled", cancelled_by: "tom", cancel_reason: "the partner is sending a new file" });
    expect(await compensations(tenant.id)).toBe(0);
    expect(await reviewState(tenant.id, reviewId)).toBe("open");
  });

  it("turns an API-key correction above the amount into a proposal by the named operator; the same request again answers the same proposal", async () => {
    const differenceId = await givenTheirsOnly("250.00");
    const before = await corrections();
    const request = { reason: "large unknown credit", operator: "sam" };
    const proposed = await client.post(`/v1/reconciliations/differences/${differenceId}/correct`, request, { "idempotency-key": `propose-${differenceId}` });
    expect(proposed.status).toBe(202);
    expect(proposed.json.proposal).toMatchObject({ subject_kind: "recon_difference", subject_id: differenceId, decision: "correct", proposed_by: "sam", proposed_via: "api_key", amount_minor: "25000" });
    expect((await client.post(`/v1/reconciliations/differences/${differenceId}/correct`, request, { "idempotency-key": `again-${differenceId}` })).json).toEqual(proposed.json);
    expect((await client.post(`/v1/reconciliations/differences/${differenceId}/correct`, { ...request, operator: "nobody" }, { "idempotency-key": `nobody-${differenceId}` })).json).toMatchObject({ status: 422, code: "four_eyes_proposer_unknown" });
    expect(await corrections()).toBe(before);
    expect((await approveAs("paths", "tom", proposed.json.proposal.proposal_id)).json.difference).toMatchObject({ state: "corrected", correction_key: `recon:${differenceId}`, decided_by: "sam approved by tom" });
    expect(await corrections()).toBe(before + 1);
  });

  it("refuses a CLI correction above the amount without --operator, and proposes it with --operator; at or below the amount it posts at once", async () => {
    const large = await givenTheirsOnly("300.00");
    const before = await corrections();
    const refused = await runCliInProcess(["recon", "correct", large, "--tenant", "paths", "--reason", "large unknown credit"], env());
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain("FOUR_EYES_PROPOSER_REQUIRED");
    expect(await proposalsOn(tenantId, large)).toBe(0);
    const proposed = await runCliInProcess(["recon", "correct", large, "--tenant", "paths", "--reason", "large unknown credit", "--operator", "sam"], envAs("paths", "sam"));
    expect(proposed.exitCode, proposed.stderr).toBe(0);
    expect(proposed.stdout).toMatch(/^prop_\w+: correct of \S+ proposed by sam \(cli\), above the tenant's four-eyes amount: nothing posted/);
    expect(await corrections()).toBe(before);
    const small = await givenTheirsOnly("9.00");
    const posted = await runCliInProcess(["recon", "correct", small, "--tenant", "paths", "--reason", "bank fee refund"], env());
    expect(posted.exitCode, posted.stderr).toBe(0);
    expect(posted.stdout).toContain(`posted recon:${small}`);
    expect(await corrections()).toBe(before + 1);
  });
});
