import type { FastifyInstance } from "fastify";
import { limits } from "../../config/limits.ts";
import type { Pool } from "../../db/pool.ts";
import {
  countCompensations, listReviews, recordHistory, type DecisionOutcome,
} from "../../records/index.ts";
import {
  approvedDecisionView, approveProposal, decideAsOperator, listProposals, cancelProposal,
  type ApprovedDecision,
} from "../../operators/four-eyes.ts";
import { authenticateOperator, setFourEyesAboveMinor } from "../../operators/operators.ts";
import { closeSession, openSession } from "../../operators/sessions.ts";
import { send } from "../http-context.ts";
import { registerFileOperations } from "./operations-files.ts";
import { registerLedgerOperations, refusal } from "./operations-ledger.ts";
import { registerRecoveryOperations } from "./operations-recovery.ts";
import { registerSettlementOperations } from "./operations-settlements.ts";
import { runIdempotent } from "../../requests/idempotent-request.ts";
import {
  operatorOf, operatorWithRole, requireSession, sessionCookie,
} from "../operator-session.ts";
import {
  fourEyesBody, opsApprovalBody, opsDecisionBody, signInBody, opsCancelBody,
} from "../operations-schemas.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import { describeIssues } from "../../errors/schema-issues.ts";
import { reviewQuery } from "../schemas.ts";
import { refreshReconMetrics } from "../../recon/recon-metrics.ts";
import { reviewItem } from "../resource-schemas.ts";
import { routeSchema } from "../route-schema.ts";

const tags = ["operations"] as const;
const sessionAnswer = {
  description: "{ operator, role, tenant_id, csrf_token, expires_at }",
  schema: {
    type: "object",
    properties: {
      operator: { type: "string" }, role: { type: "string", enum: ["viewer", "approver", "admin"] },
      tenant_id: { type: "string" }, csrf_token: { type: "string" }, expires_at: { type: "string" },
    },
  },
};
const schemas = {
  signIn: routeSchema({
    operationId: "opsSignIn",
    summary:
      "Sign in with the secret `clearline operator add` printed; sets the HttpOnly, " +
      "SameSite=Strict session cookie",
    tags,
    auth: "public",
    body: signInBody,
    ok: { 200: sessionAnswer },
    problems: {
      401: "operator_sign_in_failed: no such tenant, operator or secret (not said which)",
    },
  }),
  session: routeSchema({
    operationId: "opsGetSession",
    summary: "The signed-in operator and the session's CSRF token", tags, auth: "session",
    ok: { 200: sessionAnswer },
  }),
  signOut: routeSchema({
    operationId: "opsSignOut",
    summary: "Sign out", tags, auth: "session_csrf",
    ok: { 204: "signed out; the cookie is cleared" },
  }),
  fourEyes: routeSchema({
    operationId: "opsSetFourEyesAmount",
    summary: "Set the tenant's four-eyes amount (admin)", tags, auth: "session_csrf",
    body: fourEyesBody, idempotencyKey: true,
    ok: { 200: "{ above_amount_minor, set_by } (a repeat of the key: the stored answer)" },
    problems: {
      400: "four_eyes_amount_invalid", 409: "request_in_progress", 422: "idempotency_key_reuse",
    },
  }),
  record: routeSchema({
    operationId: "opsGetRecordHistory",
    summary:
      "One payment's history across channels (as GET /v1/records/{key}), for the signed-in " +
      "operator's tenant",
    tags,
    auth: "session",
    params: ["key"],
    ok: { 200: "{ key, identity_key, records, events, transfers }" },
    problems: { 404: "record_not_found" },
  }),
  reviews: routeSchema({
    operationId: "opsListReviews",
    summary: "The tenant's review queue",
    tags,
    auth: "session",
    query: reviewQuery,
    ok: {
      200: {
        description: "{ reviews }",
        schema: { type: "object", properties: { reviews: { type: "array", items: reviewItem } } },
      },
    },
  }),
  proposals: routeSchema({
    operationId: "opsListProposals",
    summary:
      "Proposals of the tenant, open and decided, each with its proposer and the path it came by",
    tags,
    auth: "session",
    ok: { 200: "{ proposals }" },
  }),
  decision: routeSchema({
    operationId: "opsDecideReview",
    summary:
      "Decide a held record (decision 0011's meanings); above the four-eyes amount, propose it " +
      "instead",
    tags,
    auth: "session_csrf",
    params: ["id"],
    body: opsDecisionBody,
    idempotencyKey: true,
    ok: {
      200: "the recorded decision, with the operator",
      202: "{ proposal }: waits for a second approver; nothing posted",
    },
    problems: {
      404: "review_not_found", 409: "review_decided, or proposal_open",
      422: "review_insufficient_funds, review_not_applicable or idempotency_key_reuse",
    },
  }),
  approval: routeSchema({
    operationId: "opsApproveProposal",
    summary: "Approve another operator's proposal: runs its decision, once (docs/decisions/0035)",
    tags,
    auth: "session_csrf",
    params: ["id"],
    body: opsApprovalBody,
    idempotencyKey: true,
    ok: { 200: "the decision, recording both operators" },
    problems: {
      403: "four_eyes_self_approval (the proposer), operator_role_forbidden or " +
        "operator_csrf_refused",
      404: "proposal_not_found", 409: "proposal_decided: approved or cancelled already",
      422: "the decision refused it (insufficient funds, not applicable): the proposal stays open",
    },
  }),
  cancellation: routeSchema({
    operationId: "opsCancelProposal",
    summary:
      "Cancel an open proposal with a reason (its proposer withdrawing it, or another approver " +
      "declining it): nothing moves, the subject stays as it was (docs/decisions/0035)",
    tags,
    auth: "session_csrf",
    params: ["id"],
    body: opsCancelBody,
    idempotencyKey: true,
    ok: { 200: "{ proposal }: cancelled" },
    problems: {
      404: "proposal_not_found", 409: "proposal_decided: approved or cancelled already",
      422: "idempotency_key_reuse",
    },
  }),
};

/**
 * The operations API (docs/decisions/0026): operators sign in with the secret
 * `clearline operator add` printed and get a session cookie; every other route needs it, and
 * every mutating one its CSRF token and an Idempotency-Key. Everything is scoped to the
 * operator's tenant.
 */
export function registerOperationsRoutes(app: FastifyInstance, deps: { pool: Pool }): void {
  app.post("/v1/ops/session", { schema: schemas.signIn }, async (request, reply) => {
    const body = signInBody.safeParse(request.body);
    if (!body.success) {
      return send(
        reply,
        problemReply("REQUEST_INVALID", "sign in with tenant, name and secret", {
          errors: describeIssues(body.error),
        }),
      );
    }
    const operator = await authenticateOperator(deps.pool, body.data);
    if (!operator) {
      return send(
        reply,
        problemReply("OPERATOR_SIGN_IN_FAILED", "no operator with this tenant, name and secret"),
      );
    }
    const session = await openSession(deps.pool, operator);
    reply.header(
      "set-cookie",
      sessionCookie(request, session.token, Math.floor(limits.http.operatorSessionTtlMs / 1_000)),
    );
    return send(
      reply,
      jsonReply(200, {
        operator: operator.name, role: operator.role, tenant_id: operator.tenantId,
        csrf_token: session.csrfToken, expires_at: session.expiresAt.toISOString(),
      }),
    );
  });

  void app.register(async (scope) => {
    scope.addHook("preHandler", requireSession(deps.pool));
    registerSessionRoutes(scope, deps);
    registerReviewOperations(scope, deps);
    registerReviewDecision(scope, deps);
    registerProposalOperations(scope, deps);
    registerProposalCancellation(scope, deps);
    registerLedgerOperations(scope, deps);
    registerFileOperations(scope, deps);
    registerRecoveryOperations(scope, deps);
    registerSettlementOperations(scope, deps);
  });
}

function registerSessionRoutes(scope: FastifyInstance, deps: { pool: Pool }): void {
  scope.get("/v1/ops/session", { schema: schemas.session }, async (request, reply) => {
    const session = request.operatorSession;
    if (!session) throw new Error("session route reached without a session");
    return send(
      reply,
      jsonReply(200, {
        operator: session.operator.name, role: session.operator.role,
        tenant_id: session.operator.tenantId, csrf_token: session.csrfToken,
        expires_at: session.expiresAt.toISOString(),
      }),
    );
  });

  scope.delete("/v1/ops/session", { schema: schemas.signOut }, async (request, reply) => {
    if (request.sessionToken) await closeSession(deps.pool, request.sessionToken);
    reply.header("set-cookie", sessionCookie(request, "", 0));
    return reply.code(204).send();
  });

  scope.put("/v1/ops/four-eyes", { schema: schemas.fourEyes }, async (request, reply) => {
    const operator = operatorWithRole(request, reply, "admin");
    if (!operator) return reply;
    const body = fourEyesBody.safeParse(request.body);
    if (!body.success) {
      return send(
        reply,
        problemReply(
          "FOUR_EYES_AMOUNT_INVALID", "above_amount_minor is a whole number of minor units",
          { errors: describeIssues(body.error) },
        ),
      );
    }
    const aboveMinor = body.data.above_amount_minor;
    const result = await runIdempotent({
      pool: deps.pool,
      tenantId: operator.tenantId,
      endpoint: "PUT /v1/ops/four-eyes",
      idempotencyKeyHeader: request.headers["idempotency-key"],
      canonical: { above_amount_minor: aboveMinor, operator_id: operator.operatorId },
      effect: async (tx) => {
        await setFourEyesAboveMinor(tx, operator.tenantId, BigInt(aboveMinor));
        return jsonReply(200, { above_amount_minor: aboveMinor, set_by: operator.name });
      },
    });
    return send(reply, result);
  });
}

function registerReviewOperations(scope: FastifyInstance, deps: { pool: Pool }): void {
  scope.get<{ Params: { key: string } }>(
    "/v1/ops/records/:key",
    { schema: schemas.record },
    async (request, reply) => {
      const history = await recordHistory(
        deps.pool, operatorOf(request).tenantId, request.params.key,
      );
      if (!history) {
        return send(reply, problemReply("RECORD_NOT_FOUND", `no record ${request.params.key}`));
      }
      return send(reply, jsonReply(200, history));
    },
  );

  scope.get("/v1/ops/reviews", { schema: schemas.reviews }, async (request, reply) => {
    const query = reviewQuery.safeParse(request.query);
    if (!query.success) {
      return send(
        reply,
        problemReply(
          "REQUEST_INVALID", "state is open, released, replaced, applied_as_new, refused or all",
          { errors: describeIssues(query.error) },
        ),
      );
    }
    return send(
      reply,
      jsonReply(200, {
        reviews: await listReviews(deps.pool, {
          tenantId: operatorOf(request).tenantId, state: query.data.state,
        }),
      }),
    );
  });
}

function registerReviewDecision(scope: FastifyInstance, deps: { pool: Pool }): void {
  scope.post<{ Params: { id: string } }>(
    "/v1/ops/reviews/:id/decision",
    { schema: schemas.decision },
    async (request, reply) => {
      const operator = operatorWithRole(request, reply, "approver");
      if (!operator) return reply;
      const body = opsDecisionBody.safeParse(request.body);
      if (!body.success) {
        return send(
          reply,
          problemReply("REQUEST_INVALID", "the decision request is invalid", {
            errors: describeIssues(body.error),
          }),
        );
      }
      const reviewId = request.params.id;
      let decided: DecisionOutcome | undefined;
      const result = await runIdempotent({
        pool: deps.pool,
        tenantId: operator.tenantId,
        endpoint: "POST /v1/ops/reviews/{id}/decision",
        idempotencyKeyHeader: request.headers["idempotency-key"],
        canonical: {
          review_id: reviewId, decision: body.data.decision, reason: body.data.reason,
          operator_id: operator.operatorId,
        },
        effect: async (tx) => {
          const outcome = await decideAsOperator(tx, operator, {
            reviewId, decision: body.data.decision, reason: body.data.reason,
          });
          if (!outcome.ok) return refusal(outcome.error);
          if (outcome.value.kind === "proposed") {
            return jsonReply(
              202, { proposal: outcome.value.proposal }, outcome.value.proposal.proposal_id,
            );
          }
          decided = outcome.value.outcome;
          return jsonReply(200, decided.decided, reviewId);
        },
      });
      if (decided && !result.replayed && result.status === 200) countCompensations(decided);
      return send(reply, result);
    },
  );
}

/**
 * Proposals: the second pair of eyes approves one (its decision runs, once) or any approver cancels
 * one (nothing moves).
 */
function registerProposalOperations(scope: FastifyInstance, deps: { pool: Pool }): void {
  scope.get("/v1/ops/proposals", { schema: schemas.proposals }, async (request, reply) =>
    send(
      reply,
      jsonReply(200, {
        proposals: await listProposals(
          deps.pool, operatorOf(request).tenantId, limits.ingest.listRowsMax,
        ),
      }),
    ),
  );

  scope.post<{ Params: { id: string } }>(
    "/v1/ops/proposals/:id/approval",
    { schema: schemas.approval },
    async (request, reply) => {
      const operator = operatorWithRole(request, reply, "approver");
      if (!operator) return reply;
      if (!opsApprovalBody.safeParse(request.body ?? undefined).success) {
        return send(
          reply, problemReply("REQUEST_INVALID", "an approval has no body beyond csrf_token"),
        );
      }
      const proposalId = request.params.id;
      let approved: ApprovedDecision | undefined;
      const result = await runIdempotent({
        pool: deps.pool,
        tenantId: operator.tenantId,
        endpoint: "POST /v1/ops/proposals/{id}/approval",
        idempotencyKeyHeader: request.headers["idempotency-key"],
        canonical: { proposal_id: proposalId, operator_id: operator.operatorId },
        effect: async (tx) => {
          const outcome = await approveProposal(tx, operator, proposalId);
          if (!outcome.ok) return refusal(outcome.error);
          approved = outcome.value;
          return jsonReply(200, approvedDecisionView(approved), proposalId);
        },
      });
      if (approved && !result.replayed && result.status === 200) {
        if (approved.kind === "review") countCompensations(approved.outcome);
        if (approved.kind === "recon_difference") {
          await refreshReconMetrics(deps.pool, operator.tenantId);
        }
      }
      return send(reply, result);
    },
  );
}

function registerProposalCancellation(scope: FastifyInstance, deps: { pool: Pool }): void {
  scope.post<{ Params: { id: string } }>(
    "/v1/ops/proposals/:id/cancellation",
    { schema: schemas.cancellation },
    async (request, reply) => {
      const operator = operatorWithRole(request, reply, "approver");
      if (!operator) return reply;
      const body = opsCancelBody.safeParse(request.body);
      if (!body.success) {
        return send(
          reply,
          problemReply("REQUEST_INVALID", "a cancellation gives a reason", {
            errors: describeIssues(body.error),
          }),
        );
      }
      const proposalId = request.params.id;
      const result = await runIdempotent({
        pool: deps.pool,
        tenantId: operator.tenantId,
        endpoint: "POST /v1/ops/proposals/{id}/cancellation",
        idempotencyKeyHeader: request.headers["idempotency-key"],
        canonical: {
          proposal_id: proposalId, reason: body.data.reason, operator_id: operator.operatorId,
        },
        effect: async (tx) => {
          const cancelled = await cancelProposal(tx, operator, proposalId, body.data.reason);
          return cancelled.ok
            ? jsonReply(200, { proposal: cancelled.value }, proposalId)
            : refusal(cancelled.error);
        },
      });
      return send(reply, result);
    },
  );
}
