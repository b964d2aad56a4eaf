import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setFourEyesAboveMinor } from "../../src/operators/operators.ts";
import { ApiClient } from "../support/api-client.ts";
import { givenApiWorld, type ApiWorld } from "../support/api-scenario.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenOperator, signIn, type OpsClient } from "../support/ops-client.ts";
import { givenHeldCorrection } from "./held-correction.ts";
import { PAYEE_TWO_KEY } from "../files/support.ts";

describe("the operations API: operators, sessions, CSRF, roles, four eyes", () => {
  let db: TestDatabase;
  let plain: ApiWorld;      // no four eyes
  let strict: ApiWorld;     // four eyes above 100.00
  let plainReview: string;
  let strictReview: string;
  const secrets: Record<string, string> = {};
  beforeAll(async () => {
    db = await createTestDatabase();
    plain = await givenApiWorld(db.pool, "ops-plain");
    strict = await givenApiWorld(db.pool, "ops-strict");
    plainReview = (await givenHeldCorrection(db, plain, `${plain.tenantId}-fedach`)).reviewId;
    strictReview = (await givenHeldCorrection(db, strict, `${strict.tenantId}-fedach`)).reviewId;
    await setFourEyesAboveMinor(db.pool, strict.tenantId, 10_000n);
    for (const [world, name, role] of [[plain, "vera", "viewer"], [plain, "ann", "approver"], [strict, "sam", "approver"], [strict, "tom", "approver"], [strict, "ada", "admin"]] as const) {
      secrets[name] = await givenOperator(db.pool, world.tenantId, name, role);
    }
  });
  afterAll(async () => {
    await plain.api.close();
    await strict.api.close();
    await db.drop();
  });

  const as = (world: ApiWorld, name: string): Promise<OpsClient> => signIn(world.api.baseUrl, world === plain ? "ops-plain" : "ops-strict", name, secrets[name] ?? "");
  const decision = (reason: string) => ({ decision: "replace", reason });

  it("signs in with the printed secret and sets an HttpOnly, SameSite=Strict session cookie; a wrong secret gets 401 and no cookie", async () => {
    const anonymous = new ApiClient(plain.api.baseUrl, undefined);
    const good = await anonymous.send("POST", "/v1/ops/session", { tenant: "ops-plain", name: "ann", secret: secrets.ann }, {});
    expect(good.status).toBe(200);
    expect(good.json).toMatchObject({ operator: "ann", role: "approver", csrf_token: expect.any(String) });
    expect(good.headers.get("set-cookie")).toMatch(/^clearline_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=28800$/);
    const bad = await anonymous.send("POST", "/v1/ops/session", { tenant: "ops-plain", name: "ann", secret: `${secrets.ann}x` }, {});
    expect(bad.status).toBe(401);
    expect(bad.json).toMatchObject({ code: "operator_sign_in_failed" });
    expect(bad.headers.get("set-cookie")).toBeNull();
  });

  it("refuses the operations API without a session, and an API key is no session", async () => {
    expect((await new ApiClient(plain.api.baseUrl, undefined).get("/v1/ops/reviews")).json).toMatchObject({ status: 401, code: "operator_session_missing" });
    expect((await plain.client.get("/v1/ops/reviews")).status).toBe(401);
  });

  it("refuses a mutating request without the CSRF token, and changes nothing", async () => {
    const ann = await as(plain, "ann");
    const response = await ann.mutate("POST", `/v1/ops/reviews/${plainReview}/decision`, decision("no token"), { "x-csrf-token": "" });
    expect(response.status).toBe(403);
    expect(response.json).toMatchObject({ code: "operator_csrf_refused" });
    expect((await ann.get(`/v1/ops/reviews?state=open`)).json.reviews).toMatchObject([{ review_id: plainReview, state: "open" }]);
  });

  it("requires an Idempotency-Key on a decision", async () => {
    const ann = await as(plain, "ann");
    const response = await ann.mutate("POST", `/v1/ops/reviews/${plainReview}/decision`, decision("no key"), { "idempotency-key": "" });
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ code: "idempotency_key_invalid" });
  });

  it("lets a viewer read the queue but not decide", async () => {
    const vera = await as(plain, "vera");
    expect((await vera.get("/v1/ops/reviews")).json.reviews).toHaveLength(1);
    const response = await vera.mutate("POST", `/v1/ops/reviews/${plainReview}/decision`, decision("viewer tries"));
    expect(response.status).toBe(403);
    expect(response.json).toMatchObject({ code: "operator_role_forbidden" });
  });

  it("decides below the four-eyes amount at once, records the operator, and replays the same bytes for the same key", async () => {
    const ann = await as(plain, "ann");
    const key = randomUUID();
    const first = await ann.mutate("POST", `/v1/ops/reviews/${plainReview}/decision`, decision("partner confirmed 205.00"), { "idempotency-key": key });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ state: "replaced", operator: "ann", compensation_key: `${PAYEE_TWO_KEY}:post:compensate` });
    const replay = await ann.mutate("POST", `/v1/ops/reviews/${plainReview}/decision`, decision("partner confirmed 205.00"), { "idempotency-key": key });
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect((await plain.client.get("/v1/accounts/payee-two/balance")).json).toMatchObject({ balance: "205.00" });
  });

  it("keeps tenants apart: an operator lists only their tenant's reviews, and a decision in one tenant (the replace above) leaves the other's same review open", async () => {
    // Review ids derive from the natural key and content, so both tenants hold rev_X: the tenant scope, not the id, keeps them apart.
    expect(plainReview).toBe(strictReview);
    const sam = await as(strict, "sam");
    const tenants = ((await sam.get("/v1/ops/reviews?state=all")).json.reviews as Array<{ tenant_id: string }>).map((review) => review.tenant_id);
    expect(new Set(tenants)).toEqual(new Set([strict.tenantId]));
    const ann = await as(plain, "ann");
    expect((await ann.get("/v1/ops/reviews?state=all")).json.reviews).toMatchObject([{ review_id: plainReview, tenant_id: plain.tenantId, state: "replaced" }]);
    expect((await sam.get("/v1/ops/reviews")).json.reviews).toMatchObject([{ review_id: strictReview, tenant_id: strict.tenantId, state: "open" }]);
  });

  it("shows a record's history across channels to an operator of its tenant only (GET /v1/ops/records/{key})", async () => {
    const ann = await as(plain, "ann");
    const key = (await ann.get("/v1/ops/reviews?state=all")).json.reviews[0].natural_key as string;
    const history = await ann.get(`/v1/ops/records/${encodeURIComponent(key)}`);
    expect(history.status).toBe(200);
    expect(history.json.events.filter((e: { type: string }) => e.type === "decision")).toMatchObject([{ decision: "replace", operator: "ann" }]);
    const sam = await as(strict, "sam");
    const theirs = await sam.get(`/v1/ops/records/${encodeURIComponent(key)}`);
    expect(theirs.json.events.filter((e: { type: string }) => e.type === "decision")).toEqual([]);
    expect((await sam.get("/v1/ops/records/api:nobody")).json.code).toBe("record_not_found");
  });

  it("above the four-eyes amount, proposes without posting, and refuses the proposer's own approval", async () => {
    const sam = await as(strict, "sam");
    const proposed = await sam.mutate("POST", `/v1/ops/reviews/${strictReview}/decision`, decision("partner confirmed 205.00"));
    expect(proposed.status).toBe(202);
    expect(proposed.json.proposal).toMatchObject({ subject_kind: "review", subject_id: strictReview, decision: "replace", proposed_by: "sam", state: "open", amount_minor: "20500" });
    expect((await strict.client.get("/v1/accounts/payee-two/balance")).json).toMatchObject({ balance: "200.00" });
    const own = await sam.mutate("POST", `/v1/ops/proposals/${proposed.json.proposal.proposal_id}/approval`, {});
    expect(own.status).toBe(403);
    expect(own.json).toMatchObject({ code: "four_eyes_self_approval" });
    expect((await sam.get("/v1/ops/reviews")).json.reviews).toMatchObject([{ review_id: strictReview, state: "open" }]);
  });

  it("a second approver's approval runs the decision once, recording both people", async () => {
    const tom = await as(strict, "tom");
    const [proposal] = (await tom.get("/v1/ops/proposals")).json.proposals as Array<{ proposal_id: string }>;
    const approved = await tom.mutate("POST", `/v1/ops/proposals/${proposal?.proposal_id}/approval`, {});
    expect(approved.status).toBe(200);
    expect(approved.json).toMatchObject({ state: "replaced", operator: "sam approved by tom" });
    expect((await strict.client.get("/v1/accounts/payee-two/balance")).json).toMatchObject({ balance: "205.00" });
    const again = await tom.mutate("POST", `/v1/ops/proposals/${proposal?.proposal_id}/approval`, {});
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ code: "proposal_decided" });
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM transfer WHERE tenant_id = $1 AND kind = 'correction-compensation'", [strict.tenantId]);
    expect(rows[0].n).toBe(1);
  });

  it("lets only an admin set the four-eyes amount", async () => {
    const tom = await as(strict, "tom");
    expect((await tom.mutate("PUT", "/v1/ops/four-eyes", { above_amount_minor: "1" })).status).toBe(403);
    const ada = await as(strict, "ada");
    expect((await ada.mutate("PUT", "/v1/ops/four-eyes", { above_amount_minor: "50000" })).json).toMatchObject({ above_amount_minor: "50000", set_by: "ada" });
  });

  it("keeps the idempotency contract on setting the four-eyes amount: a repeat of the key answers the stored answer, no key is refused", async () => {
    const ada = await as(strict, "ada");
    const key = { "idempotency-key": "four-eyes-50000" };
    const first = await ada.mutate("PUT", "/v1/ops/four-eyes", { above_amount_minor: "50000" }, key);
    const again = await ada.mutate("PUT", "/v1/ops/four-eyes", { above_amount_minor: "50000" }, key);
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.text).toBe(first.text);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await ada.mutate("PUT", "/v1/ops/four-eyes", { above_amount_minor: "60000" }, key)).json.code).toBe("idempotency_key_reuse");
    expect((await ada.mutate("PUT", "/v1/ops/four-eyes", { above_amount_minor: "50000" }, { "idempotency-key": undefined })).status).toBe(400);
  });

  it("moves a suspense posting to the account it belongs to, once: the same move again posts nothing, another target is refused", async () => {
    const ann = await as(plain, "ann");
    const [posting] = (await ann.get("/v1/ops/suspense")).json.postings as Array<{ transfer_key: string; amount_minor: string }>;
    if (!posting) throw new Error("nothing in suspense");
    const move = { posting_key: posting.transfer_key, to_account: "bob", reason: "alias for bob was missing" };
    const moved = await ann.mutate("POST", "/v1/ops/suspense/moves", move);
    expect(moved.status).toBe(200);
    expect(moved.json.suspense_move).toMatchObject({ move_key: `${posting.transfer_key}:suspense-move`, target_account: "bob", amount_minor: posting.amount_minor, decided_by: "ann" });
    const bobBalance = (await plain.client.get("/v1/accounts/bob/balance")).json.balance;
    expect(bobBalance).toBe((Number(posting.amount_minor) / 100).toFixed(2));
    const again = await ann.mutate("POST", "/v1/ops/suspense/moves", move);
    expect(again.json).toEqual(moved.json);
    expect((await plain.client.get("/v1/accounts/bob/balance")).json.balance).toBe(bobBalance);
    const elsewhere = await ann.mutate("POST", "/v1/ops/suspense/moves", { ...move, to_account: "alice" });
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.json).toMatchObject({ code: "suspense_moved" });
    expect((await plain.client.get("/v1/accounts/alice/balance")).json.balance).toBe("0.00");
  });

  it("refuses a viewer's suspense move", async () => {
    const vera = await as(plain, "vera");
    const [posting] = (await vera.get("/v1/ops/suspense")).json.postings as Array<{ transfer_key: string }>;
    const response = await vera.mutate("POST", "/v1/ops/suspense/moves", { posting_key: posting?.transfer_key, to_account: "alice", reason: "viewer tries" });
    expect(response.status).toBe(403);
  });

  it("a suspense move above the four-eyes amount waits for a second approver, who posts it", async () => {
    const sam = await as(strict, "sam");
    const postings = (await sam.get("/v1/ops/suspense")).json.postings as Array<{ transfer_key: string; amount_minor: string }>;
    const large = postings.find((posting) => BigInt(posting.amount_minor) > 50_000n) ?? postings.find((posting) => BigInt(posting.amount_minor) > 10_000n);
    if (!large) throw new Error("no suspense posting above the four-eyes amount");
    await db.pool.query("UPDATE tenant_four_eyes SET above_amount_minor = 10000 WHERE tenant_id = $1", [strict.tenantId]);
    const proposed = await sam.mutate("POST", "/v1/ops/suspense/moves", { posting_key: large.transfer_key, to_account: "bob", reason: "belongs to bob" });
    expect(proposed.status).toBe(202);
    expect(proposed.json.proposal).toMatchObject({ subject_kind: "suspense_move", target_account: "bob", proposed_by: "sam" });
    expect((await strict.client.get("/v1/accounts/bob/balance")).json.balance).toBe("0.00");
    const tom = await as(strict, "tom");
    const approved = await tom.mutate("POST", `/v1/ops/proposals/${proposed.json.proposal.proposal_id}/approval`, {});
    expect(approved.status).toBe(200);
    expect(approved.json.suspense_move).toMatchObject({ decided_by: "sam approved by tom", amount_minor: large.amount_minor });
    expect((await strict.client.get("/v1/accounts/bob/balance")).json.balance).toBe((Number(large.amount_minor) / 100).toFixed(2));
  });

  it("shows a signed-in operator the tenant's accounts with balances and a statement with origins; another tenant's account is not found", async () => {
    const vera = await as(plain, "vera");
    const accounts = (await vera.get("/v1/ops/accounts")).json.accounts as Array<{ id: string; balance: string }>;
    expect(accounts).toContainEqual(expect.objectContaining({ id: "payee-two", balance: "205.00" }));
    const statement = await vera.get("/v1/ops/accounts/payee-two/statement");
    expect(statement.status).toBe(200);
    expect(JSON.stringify(statement.json)).toContain("correction-compensation");
    const sam = await as(strict, "sam");
    expect((await sam.get("/v1/ops/accounts/no-such-account/statement")).status).toBe(404);
    expect(((await sam.get("/v1/ops/accounts")).json.accounts as Array<{ id: string }>).some((account) => account.id.includes(plain.tenantId))).toBe(false);
  });

  it("refuses every keyed operations route without an Idempotency-Key, before doing anything", async () => {
    const ann = await as(plain, "ann");
    const routes: Array<[string, unknown]> = [
      [`/v1/ops/reviews/${plainReview}/decision`, decision("no key")],
      ["/v1/ops/proposals/prop_none/approval", {}],
      ["/v1/ops/suspense/moves", { posting_key: "none", to_account: "bob", reason: "no key" }],
    ];
    for (const [path, body] of routes) {
      const response = await ann.mutate("POST", path, body, { "idempotency-key": undefined });
      expect({ path, status: response.status, code: response.json.code }).toEqual({ path, status: 400, code: "idempotency_key_missing" });
    }
    const upload = await ann.mutate("POST", "/v1/ops/files?name=x.ach", "bytes", { "content-type": "application/octet-stream", "idempotency-key": undefined });
    expect(upload.json).toMatchObject({ code: "idempotency_key_missing" });
  });

  it("refuses a session past its expiry (limits.http.operatorSessionTtlMs) and deletes it", async () => {
    const ann = await as(plain, "ann");
    expect((await ann.get("/v1/ops/session")).status).toBe(200);
    await db.pool.query("UPDATE operator_session SET expires_at = now() - interval '1 millisecond' WHERE operator_id = (SELECT operator_id FROM operator WHERE name = 'ann')");
    expect((await ann.get("/v1/ops/session")).json).toMatchObject({ code: "operator_session_missing" });
    const hash = createHash("sha256").update(ann.cookie.slice("clearline_session=".length)).digest("hex");
    expect((await db.pool.query("SELECT 1 FROM operator_session WHERE session_hash = $1", [hash])).rows).toHaveLength(0);
  });

  it("signs out: the cookie stops working", async () => {
    const ann = await as(plain, "ann");
    expect((await ann.mutate("DELETE", "/v1/ops/session", undefined)).status).toBe(204);
    expect((await ann.get("/v1/ops/reviews")).status).toBe(401);
  });
});

describe("four eyes in the database", () => {
  it("refuses a proposal approved by its proposer even when written by hand", async () => {
    const db = await createTestDatabase();
    try {
      const world = await givenApiWorld(db.pool, "ops-db");
      const secret = await givenOperator(db.pool, world.tenantId, "solo", "approver");
      expect(secret).toMatch(/^op_/);
      const { rows } = await db.pool.query<{ operator_id: string }>("SELECT operator_id FROM operator WHERE name = 'solo'");
      const solo = rows[0]?.operator_id;
      const write = db.pool.query(`INSERT INTO decision_proposal (tenant_id, proposal_id, subject_kind, subject_id, decision, reason, amount_minor, currency, proposed_by, state, approved_by, approved_at)
        VALUES ($1, 'prop_x', 'review', 'rev_x', 'replace', 'r', 1, 'USD', $2, 'approved', $2, now())`, [world.tenantId, solo]);
      await expect(write).rejects.toMatchObject({ code: "23514" });
      await world.api.close();
    } finally {
      await db.drop();
    }
  });
});
