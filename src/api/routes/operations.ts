import type { FastifyInstance } from "fastify";
import { limits } from "../../config/limits.ts";
import type { Pool } from "../../db/pool.ts";
import { countCompensations, type DecisionOutcome } from "../../records/review-decision.ts";
import { listReviews } from "../../records/review-queue.ts";
import { approveProposal, decideAsOperator, listProposals } from "../../operators/four-eyes.ts";
import { authenticateOperator, setFourEyesAboveMinor } from "../../operators/operators.ts";
import { closeSession, openSession } from "../../operators/sessions.ts";
import { send } from "../http-context.ts";
import { registerFileOperations } from "./operations-files.ts";
import { registerLedgerOperations, refusal } from "./operations-ledger.ts";
import { registerRecoveryOperations } from "./operations-recovery.ts";
import { runIdempotent } from "../../requests/idempotent-request.ts";
import { operatorOf, operatorWithRole, requireSession, sessionCookie } from "../operator-session.ts";
import { fourEyesBody, opsApprovalBody, opsDecisionBody, signInBody } from "../operations-schemas.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import { describeIssues } from "../../errors/schema-issues.ts";
import { reviewQuery } from "../schemas.ts";

/**
 * The operations API (issue 14, docs/decisions/0026): operators sign in with the secret
 * `clearline operator add` printed and get a session cookie; every other route needs it, and
 * every mutating one its CSRF token and an Idempotency-Key. Everything is scoped to the
 * operator's tenant.
 */
export function registerOperationsRoutes(app: FastifyInstance, deps: { pool: Pool }): void {
  app.post("/v1/ops/session", async (request, reply) => {
    const body = signInBody.safeParse(request.body);
    if (!body.success) return send(reply, problemReply("REQUEST_INVALID", "sign in with tenant, name and secret", { errors: describeIssues(body.error) }));
    const operator = await authenticateOperator(deps.pool, body.data);
    if (!operator) return send(reply, problemReply("OPERATOR_SIGN_IN_FAILED", "no operator with this tenant, name and secret"));
    const session = await openSession(deps.pool, operator);
    reply.header("set-cookie", sessionCookie(request, session.token, Math.floor(limits.http.operatorSessionTtlMs / 1_000)));
    return send(reply, jsonReply(200, { operator: operator.name, role: operator.role, tenant_id: operator.tenantId, csrf_token: session.csrfToken, expires_at: session.expiresAt.toISOString() }));
  });

  void app.register(async (scope) => {
    scope.addHook("preHandler", requireSession(deps.pool));
    registerSessionRoutes(scope, deps);
    registerReviewOperations(scope, deps);
    registerLedgerOperations(scope, deps);
    registerFileOperations(scope, deps);
    registerRecoveryOperations(scope, deps);
  });
}

function registerSessionRoutes(scope: FastifyInstance, deps: { pool: Pool }): void {
  scope.get("/v1/ops/session", async (request, reply) => {
    const session = request.operatorSession;
    if (!session) throw new Error("session route reached without a session");
    return send(reply, jsonReply(200, { operator: session.operator.name, role: session.operator.role, tenant_id: session.operator.tenantId, csrf_token: session.csrfToken, expires_at: session.expiresAt.toISOString() }));
  });

  scope.delete("/v1/ops/session", async (request, reply) => {
    if (request.sessionToken) await closeSession(deps.pool, request.sessionToken);
    reply.header("set-cookie", sessionCookie(request, "", 0));
    return reply.code(204).send();
  });

  scope.put("/v1/ops/four-eyes", async (request, reply) => {
    const operator = operatorWithRole(request, reply, "admin");
    if (!operator) return reply;
    const body = fourEyesBody.safeParse(request.body);
    if (!body.success) return send(reply, problemReply("FOUR_EYES_AMOUNT_INVALID", "above_amount_minor is a whole number of minor units", { errors: describeIssues(body.error) }));
    await setFourEyesAboveMinor(deps.pool, operator.tenantId, BigInt(body.data.above_amount_minor));
    return send(reply, jsonReply(200, { above_amount_minor: body.data.above_amount_minor, set_by: operator.name }));
  });
}

function registerReviewOperations(scope: FastifyInstance, deps: { pool: Pool }): void {
  scope.get("/v1/ops/reviews", async (request, reply) => {
    const query = reviewQuery.safeParse(request.query);
    if (!query.success) return send(reply, problemReply("REQUEST_INVALID", "state is open, released, replaced, applied_as_new, refused or all", { errors: describeIssues(query.error) }));
    return send(reply, jsonReply(200, { reviews: await listReviews(deps.pool, { tenantId: operatorOf(request).tenantId, state: query.data.state }) }));
  });

  scope.get("/v1/ops/proposals", async (request, reply) =>
    send(reply, jsonReply(200, { proposals: await listProposals(deps.pool, operatorOf(request).tenantId, limits.ingest.listRowsMax) })));

  scope.post<{ Params: { id: string } }>("/v1/ops/reviews/:id/decision", async (request, reply) => {
    const operator = operatorWithRole(request, reply, "approver");
    if (!operator) return reply;
    const body = opsDecisionBody.safeParse(request.body);
    if (!body.success) return send(reply, problemReply("REQUEST_INVALID", "the decision request is invalid", { errors: describeIssues(body.error) }));
    const reviewId = request.params.id;
    let decided: DecisionOutcome | undefined;
    const result = await runIdempotent({
      pool: deps.pool, tenantId: operator.tenantId, endpoint: "POST /v1/ops/reviews/{id}/decision", idempotencyKeyHeader: request.headers["idempotency-key"],
      canonical: { review_id: reviewId, decision: body.data.decision, reason: body.data.reason, operator_id: operator.operatorId },
      effect: async (tx) => {
        const outcome = await decideAsOperator(tx, operator, { reviewId, decision: body.data.decision, reason: body.data.reason });
        if (!outcome.ok) return refusal(outcome.error);
        if (outcome.value.kind === "proposed") return jsonReply(202, { proposal: outcome.value.proposal }, outcome.value.proposal.proposal_id);
        decided = outcome.value.outcome;
        return jsonReply(200, decided.decided, reviewId);
      },
    });
    if (decided && !result.replayed && result.status === 200) countCompensations(decided);
    return send(reply, result);
  });

  scope.post<{ Params: { id: string } }>("/v1/ops/proposals/:id/approval", async (request, reply) => {
    const operator = operatorWithRole(request, reply, "approver");
    if (!operator) return reply;
    if (!opsApprovalBody.safeParse(request.body ?? undefined).success) return send(reply, problemReply("REQUEST_INVALID", "an approval has no body beyond csrf_token"));
    const proposalId = request.params.id;
    let decided: DecisionOutcome | undefined;
    const result = await runIdempotent({
      pool: deps.pool, tenantId: operator.tenantId, endpoint: "POST /v1/ops/proposals/{id}/approval", idempotencyKeyHeader: request.headers["idempotency-key"],
      canonical: { proposal_id: proposalId, operator_id: operator.operatorId },
      effect: async (tx) => {
        const outcome = await approveProposal(tx, operator, proposalId);
        if (!outcome.ok) return refusal(outcome.error);
        if (outcome.value.kind === "suspense_move") return jsonReply(200, { suspense_move: outcome.value.move }, proposalId);
        decided = outcome.value.outcome;
        return jsonReply(200, decided.decided, proposalId);
      },
    });
    if (decided && !result.replayed && result.status === 200) countCompensations(decided);
    return send(reply, result);
  });
}
