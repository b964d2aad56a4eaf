import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openIncident } from "../../src/incidents/perimeter.ts";
import { setFourEyesAboveMinor } from "../../src/operators/operators.ts";
import { enqueueOutbox, leaseDue, markFailed } from "../../src/outbox/outbox-store.ts";
import { importExternalFile } from "../../src/recon/external-items.ts";
import { runReconciliation } from "../../src/recon/runs.ts";
import { fund, givenApiWorld, type ApiWorld } from "../support/api-scenario.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenOperator, signIn, type OpsClient } from "../support/ops-client.ts";

const today = () => new Date().toISOString().slice(0, 10);

/** The settlement account's day reconciled against a bank file with one unknown credit: one theirs_only, one ours_only (the funding). */
async function givenDifferences(db: TestDatabase, world: ApiWorld, unknownAmount: string): Promise<void> {
  await fund(world.client, "alice", "50.00");
  const csv = `id,date,amount,currency,reference,description\nc1,${today()},${unknownAmount},USD,NOPE,unknown wire\n`;
  const imported = await importExternalFile(db.pool, { tenantId: world.tenantId, accountId: "settlement", name: "bank.csv", content: Buffer.from(csv), format: "csv" });
  if (!imported.ok) throw new Error(imported.error.map((f) => f.message).join("; "));
  const run = await runReconciliation(db.pool, { tenantId: world.tenantId, accountId: "settlement", from: today(), to: today() });
  if (!run.ok) throw new Error(run.error.message);
}

/** One webhook message of the tenant that the relay gave up on (leased, then marked dead through the store). */
async function givenDeadLetter(db: TestDatabase, tenantId: string, key: string): Promise<string> {
  await enqueueOutbox(db.pool, { tenantId, destination: "webhook:test", messageType: "payment.applied", messageKey: key, payload: { key } });
  const leased = (await leaseDue(db.pool, "test-relay", 100, 60_000)).find((m) => m.tenantId === tenantId && m.messageKey === key);
  if (!leased) throw new Error("nothing leased");
  await markFailed(db.pool, leased, "HTTP 500 from the receiver", { dead: true });
  return leased.id;
}

async function transfersOfKind(db: TestDatabase, tenantId: string, kind: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM transfer WHERE tenant_id = $1 AND kind = $2", [tenantId, kind]);
  return rows[0]?.n ?? -1;
}

describe("the operations API: reconciliation differences, outbox dead letters, incidents", () => {
  let db: TestDatabase;
  let plain: ApiWorld;      // no four eyes
  let strict: ApiWorld;     // four eyes above 100.00
  let deadLetter: string;
  const secrets: Record<string, string> = {};
  beforeAll(async () => {
    db = await createTestDatabase();
    plain = await givenApiWorld(db.pool, "rec-plain");
    strict = await givenApiWorld(db.pool, "rec-strict");
    await givenDifferences(db, plain, "9.00");
    await givenDifferences(db, strict, "250.00");
    await setFourEyesAboveMinor(db.pool, strict.tenantId, 10_000n);
    deadLetter = await givenDeadLetter(db, plain.tenantId, "dead-1");
    for (const [world, name, role] of [[plain, "vera", "viewer"], [plain, "ann", "approver"], [strict, "sam", "approver"], [strict, "tim", "approver"]] as const) {
      secrets[name] = await givenOperator(db.pool, world.tenantId, name, role);
    }
  });
  afterAll(async () => {
    await plain.api.close();
    await strict.api.close();
    await db.drop();
  });

  const as = (world: ApiWorld, name: string): Promise<OpsClient> => signIn(world.api.baseUrl, world === plain ? "rec-plain" : "rec-strict", name, secrets[name] ?? "");
  const openDifferences = async (client: OpsClient) => (await client.get("/v1/ops/differences")).json.differences as Array<{ difference_id: string; reason: string; delta_minor: string; state: string }>;

  it("lists the tenant's open differences by reason, theirs_only first, and none of another tenant's", async () => {
    const ann = await as(plain, "ann");
    expect((await ann.get("/v1/ops/differences")).json.by_reason).toEqual({ theirs_only: 1, ours_only: 1 });
    const mine = await openDifferences(ann);
    expect(mine.map((d) => [d.reason, d.delta_minor])).toEqual([["theirs_only", "900"], ["ours_only", "-5000"]]);
    const theirs = await openDifferences(await as(strict, "sam"));
    expect(theirs.map((d) => d.difference_id).filter((id) => mine.some((m) => m.difference_id === id))).toEqual([]);
  });

  it("lets a viewer read the differences but not decide them", async () => {
    const vera = await as(plain, "vera");
    const [first] = await openDifferences(vera);
    const response = await vera.mutate("POST", `/v1/ops/differences/${first?.difference_id}/correct`, { reason: "viewer tries" });
    expect(response.status).toBe(403);
    expect(response.json).toMatchObject({ code: "operator_role_forbidden" });
    expect(await transfersOfKind(db, plain.tenantId, "recon_correction")).toBe(0);
  });

  it("refuses a correction without the CSRF token or without an Idempotency-Key, and posts nothing", async () => {
    const ann = await as(plain, "ann");
    const [first] = await openDifferences(ann);
    const noToken = await ann.mutate("POST", `/v1/ops/differences/${first?.difference_id}/correct`, { reason: "no token" }, { "x-csrf-token": "" });
    expect(noToken.json).toMatchObject({ status: 403, code: "operator_csrf_refused" });
    const noKey = await ann.mutate("POST", `/v1/ops/differences/${first?.difference_id}/correct`, { reason: "no key" }, { "idempotency-key": "" });
    expect(noKey.json).toMatchObject({ status: 400, code: "idempotency_key_invalid" });
    expect(await transfersOfKind(db, plain.tenantId, "recon_correction")).toBe(0);
  });

  it("refuses another tenant's difference as unknown", async () => {
    const [strictFirst] = await openDifferences(await as(strict, "sam"));
    const response = await (await as(plain, "ann")).mutate("POST", `/v1/ops/differences/${strictFirst?.difference_id}/explain`, { reason: "not mine" });
    expect(response.json).toMatchObject({ status: 404, code: "recon_difference_unknown" });
  });

  it("corrects a difference with the operator as decider, once: the same key replays the same answer and posts one transfer", async () => {
    const ann = await as(plain, "ann");
    const [theirsOnly] = await openDifferences(ann);
    const headers = { "idempotency-key": `correct-${theirsOnly?.difference_id}` };
    const first = await ann.mutate("POST", `/v1/ops/differences/${theirsOnly?.difference_id}/correct`, { reason: "bank fee refund without advice" }, headers);
    const again = await ann.mutate("POST", `/v1/ops/differences/${theirsOnly?.difference_id}/correct`, { reason: "bank fee refund without advice" }, headers);
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ state: "corrected", decided_by: "ann", decision_reason: "bank fee refund without advice", correction_key: `recon:${theirsOnly?.difference_id}` });
    expect(again.text).toBe(first.text);
    expect(await transfersOfKind(db, plain.tenantId, "recon_correction")).toBe(1);
  });

  it("explains a difference with the operator as decider and moves no money", async () => {
    const ann = await as(plain, "ann");
    const [oursOnly] = await openDifferences(ann);
    const response = await ann.mutate("POST", `/v1/ops/differences/${oursOnly?.difference_id}/explain`, { reason: "funding booked before the bank's cut-off" });
    expect(response.json).toMatchObject({ reason: "ours_only", state: "explained", decided_by: "ann", correction_key: null });
    expect(await transfersOfKind(db, plain.tenantId, "recon_correction")).toBe(1);
    expect(await openDifferences(ann)).toEqual([]);
  });

  const strictTheirsOnly = async () => {
    const [theirsOnly] = await openDifferences(await as(strict, "sam"));
    expect(theirsOnly).toMatchObject({ reason: "theirs_only", delta_minor: "25000" });
    return theirsOnly?.difference_id ?? "";
  };

  it("above the tenant's four-eyes amount, proposes the correction (202) and posts nothing; the difference stays open", async () => {
    const differenceId = await strictTheirsOnly();
    const proposed = await (await as(strict, "sam")).mutate("POST", `/v1/ops/differences/${differenceId}/correct`, { reason: "large unknown credit" });
    expect(proposed.status).toBe(202);
    expect(proposed.json.proposal).toMatchObject({ subject_kind: "recon_difference", subject_id: differenceId, decision: "correct", amount_minor: "25000", currency: "USD", proposed_by: "sam", proposed_via: "console", state: "open" });
    expect(await transfersOfKind(db, strict.tenantId, "recon_correction")).toBe(0);
    expect((await openDifferences(await as(strict, "sam")))[0]).toMatchObject({ difference_id: differenceId, state: "open" });
  });

  it("refuses the proposer's own approval of the correction, and posts nothing", async () => {
    const sam = await as(strict, "sam");
    const [proposal] = (await sam.get("/v1/ops/proposals")).json.proposals as Array<{ proposal_id: string }>;
    const own = await sam.mutate("POST", `/v1/ops/proposals/${proposal?.proposal_id}/approval`, {});
    expect(own.json).toMatchObject({ status: 403, code: "four_eyes_self_approval" });
    expect(await transfersOfKind(db, strict.tenantId, "recon_correction")).toBe(0);
  });

  it("refuses to explain a difference whose correction waits for approval, and closes nothing", async () => {
    const differenceId = await strictTheirsOnly();
    const explained = await (await as(strict, "tim")).mutate("POST", `/v1/ops/differences/${differenceId}/explain`, { reason: "explain it away" });
    expect(explained.json).toMatchObject({ status: 409, code: "proposal_open" });
    expect((await openDifferences(await as(strict, "sam")))[0]).toMatchObject({ difference_id: differenceId, state: "open" });
  });

  it("lets a second approver approve: the correction recon:<difference> posts once, recording both; the same key replays, another key is refused", async () => {
    const differenceId = await strictTheirsOnly();
    const tim = await as(strict, "tim");
    const [proposal] = (await tim.get("/v1/ops/proposals")).json.proposals as Array<{ proposal_id: string }>;
    const headers = { "idempotency-key": `approve-${proposal?.proposal_id}` };
    const approved = await tim.mutate("POST", `/v1/ops/proposals/${proposal?.proposal_id}/approval`, {}, headers);
    expect(approved.status).toBe(200);
    expect(approved.json.difference).toMatchObject({ difference_id: differenceId, state: "corrected", decided_by: "sam approved by tim", decision_reason: "large unknown credit", correction_key: `recon:${differenceId}` });
    const replayed = await tim.mutate("POST", `/v1/ops/proposals/${proposal?.proposal_id}/approval`, {}, headers);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(replayed.text).toBe(approved.text);
    expect((await tim.mutate("POST", `/v1/ops/proposals/${proposal?.proposal_id}/approval`, {})).json).toMatchObject({ status: 409, code: "proposal_decided" });
    expect(await transfersOfKind(db, strict.tenantId, "recon_correction")).toBe(1);
    const { rows } = await db.pool.query<{ amount_minor: string }>("SELECT amount_minor::text FROM ledger_entry WHERE tenant_id = $1 AND transfer_key = $2 AND account_id = 'settlement'", [strict.tenantId, `recon:${differenceId}`]);
    expect(rows).toEqual([{ amount_minor: "25000" }]);
    expect((await tim.get("/v1/ops/proposals")).json.proposals).toMatchObject([{ proposal_id: proposal?.proposal_id, state: "approved", approved_by: "tim" }]);
  });

  it("cancels a proposed correction with a reason: nothing moves, the difference stays open, and it can be proposed again", async () => {
    const sam = await as(strict, "sam");
    const [oursOnly] = await openDifferences(sam);
    expect(oursOnly).toMatchObject({ reason: "ours_only", delta_minor: "-5000" });
    await db.pool.query("UPDATE tenant_four_eyes SET above_amount_minor = 1000 WHERE tenant_id = $1", [strict.tenantId]);
    try {
      const proposed = await sam.mutate("POST", `/v1/ops/differences/${oursOnly?.difference_id}/correct`, { reason: "funding never reached the bank" });
      expect(proposed.status).toBe(202);
      const cancelled = await (await as(strict, "tim")).mutate("POST", `/v1/ops/proposals/${proposed.json.proposal.proposal_id}/cancellation`, { reason: "the bank's file was late" });
      expect(cancelled.json.proposal).toMatchObject({ state: "cancelled", cancelled_by: "tim", cancel_reason: "the bank's file was late" });
      expect((await sam.mutate("POST", `/v1/ops/proposals/${proposed.json.proposal.proposal_id}/approval`, {})).json).toMatchObject({ status: 409, code: "proposal_decided" });
      expect(await transfersOfKind(db, strict.tenantId, "recon_correction")).toBe(1);
      expect((await openDifferences(sam))[0]).toMatchObject({ difference_id: oursOnly?.difference_id, state: "open" });
      const again = await sam.mutate("POST", `/v1/ops/differences/${oursOnly?.difference_id}/correct`, { reason: "funding never reached the bank" });
      expect(again.status).toBe(202);
      expect(again.json.proposal.proposal_id).not.toBe(proposed.json.proposal.proposal_id);
    } finally {
      await db.pool.query("UPDATE tenant_four_eyes SET above_amount_minor = 10000 WHERE tenant_id = $1", [strict.tenantId]);
    }
  });

  it("lists the tenant's dead letters with the outbox lag, and another tenant sees none of them", async () => {
    const listed = (await (await as(plain, "vera")).get("/v1/ops/outbox/dead-letters")).json;
    expect(listed.dead_letters).toMatchObject([{ id: deadLetter, state: "dead", message_key: "dead-1", last_error: "HTTP 500 from the receiver" }]);
    expect(listed.oldest_undelivered_age_seconds).toEqual(expect.any(Number));
    expect((await (await as(strict, "sam")).get("/v1/ops/outbox/dead-letters")).json.dead_letters).toEqual([]);
  });

  it("retries a dead letter for an approver only, with CSRF and an Idempotency-Key; a message that is not dead, or another tenant's, is refused", async () => {
    const vera = await as(plain, "vera");
    const ann = await as(plain, "ann");
    expect((await vera.mutate("POST", `/v1/ops/outbox/${deadLetter}/retry`, undefined)).json).toMatchObject({ status: 403, code: "operator_role_forbidden" });
    expect((await ann.mutate("POST", `/v1/ops/outbox/${deadLetter}/retry`, undefined, { "x-csrf-token": "" })).json).toMatchObject({ status: 403, code: "operator_csrf_refused" });
    expect((await ann.mutate("POST", `/v1/ops/outbox/${deadLetter}/retry`, undefined, { "idempotency-key": "" })).json).toMatchObject({ status: 400, code: "idempotency_key_invalid" });
    expect((await (await as(strict, "sam")).mutate("POST", `/v1/ops/outbox/${deadLetter}/retry`, undefined)).json).toMatchObject({ status: 404, code: "outbox_message_unknown" });
    const retried = await ann.mutate("POST", `/v1/ops/outbox/${deadLetter}/retry`, undefined, { "idempotency-key": "retry-1" });
    expect(retried.json).toEqual({ retried: deadLetter, by: "ann" });
    expect((await ann.mutate("POST", `/v1/ops/outbox/${deadLetter}/retry`, undefined, { "idempotency-key": "retry-1" })).text).toBe(retried.text);
    expect((await ann.mutate("POST", `/v1/ops/outbox/${deadLetter}/retry`, undefined)).json).toMatchObject({ status: 409, code: "outbox_message_not_dead" });
    expect((await ann.get("/v1/ops/outbox/dead-letters")).json.dead_letters).toEqual([]);
  });

  it("lists and shows the tenant's incidents; another tenant's is unknown", async () => {
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const opened = await openIncident(db.pool, plain.tenantId, "fundings to check", { since, until, channel: "http" }, "ann");
    if (!opened.ok) throw new Error(opened.error.message);
    const ann = await as(plain, "ann");
    expect((await ann.get("/v1/ops/incidents")).json.incidents).toMatchObject([{ incident_id: opened.value.incidentId, title: "fundings to check", opened_by: "ann", records: 1, compensations: 0 }]);
    expect((await ann.get(`/v1/ops/incidents/${opened.value.incidentId}`)).json).toMatchObject({ incident_id: opened.value.incidentId, records: [{ channel: "http", amount_minor: "5000" }] });
    const sam = await as(strict, "sam");
    expect((await sam.get("/v1/ops/incidents")).json.incidents).toEqual([]);
    expect((await sam.get(`/v1/ops/incidents/${opened.value.incidentId}`)).json).toMatchObject({ status: 404, code: "incident_unknown" });
  });
});
