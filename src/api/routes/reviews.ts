import type { FastifyInstance } from "fastify";
import { countCompensations, listReviews, type DecisionOutcome } from "../../records/index.ts";
import { send, tenantOf, type ApiDependencies } from "../http-context.ts";
import { runIdempotent } from "../../requests/idempotent-request.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import { describeIssues } from "../../errors/schema-issues.ts";
import { reviewDecisionBody, reviewQuery } from "../schemas.ts";
import { decideByNamedOperator } from "../../operators/four-eyes.ts";
import { decidedReview, reviewItem } from "../resource-schemas.ts";
import { routeSchema } from "../route-schema.ts";

const DECISION_ENDPOINT = "POST /v1/reviews/{id}/decision";

const listSchema = routeSchema({
  operationId: "listReviews",
  summary: "Held records of the API key's tenant (conflicts, suspects), open by default", tags: ["reviews"], auth: "api_key", query: reviewQuery,
  ok: { 200: { description: "{ reviews: [...] }, oldest first", schema: { type: "object", properties: { reviews: { type: "array", items: reviewItem } } } } },
});
const decisionSchema = routeSchema({
  operationId: "decideReview",
  summary: "Decide a held record: replace, apply_as_new or refuse (idempotent; one decision per review, for ever)", tags: ["reviews"], auth: "api_key",
  params: ["id"], body: reviewDecisionBody, idempotencyKey: true,
  ok: {
    200: { description: "the decision (a repeat of the same decision answers the stored one; a replayed key adds Idempotent-Replayed: true)", schema: decidedReview },
    202: "{ proposal }: above the tenant's four-eyes amount the decision is proposed by the operator named, and waits for another approver in the console; nothing posted (docs/decisions/0035)",
  },
  problems: {
    404: "review_not_found (stored)",
    409: "review_decided: another decision was recorded first (named); proposal_open; "
      + "or request_in_progress",
    422: "review_insufficient_funds or review_not_applicable (stored; nothing posted, the review "
      + "stays open), four_eyes_proposer_unknown (the operator named is no approver of the "
      + "tenant), or idempotency_key_reuse",
  },
});

/**
 * The review queue for the operations console (docs/decisions/0011), scoped to the API key's tenant:
 *   GET /v1/reviews?state=open                 held conflicts and suspects (or decided ones)
 *   POST /v1/reviews/{id}/decision             replace | apply_as_new | refuse, with reason and
 *     operator; Idempotency-Key required. The decision and its postings commit with the key's claim.
 *     Above the four-eyes amount it is a proposal by the operator named (an approver of the tenant).
 */
export function registerReviewRoutes(app: FastifyInstance, deps: ApiDependencies): void {
  app.get("/v1/reviews", { schema: listSchema }, async (request, reply) => {
    const query = reviewQuery.safeParse(request.query);
    if (!query.success) return send(reply, problemReply("REQUEST_INVALID", "state is open, released, replaced, applied_as_new, refused or all", { errors: describeIssues(query.error) }));
    const reviews = await listReviews(deps.pool, { tenantId: tenantOf(request).tenantId, state: query.data.state });
    return send(reply, jsonReply(200, { reviews }));
  });

  app.post<{ Params: { id: string } }>("/v1/reviews/:id/decision", { schema: decisionSchema }, async (request, reply) => {
    const tenantId = tenantOf(request).tenantId;
    const body = reviewDecisionBody.safeParse(request.body);
    if (!body.success) return send(reply, problemReply("REQUEST_INVALID", "the decision request is invalid", { errors: describeIssues(body.error) }));
    const reviewId = request.params.id;
    let decided: DecisionOutcome | undefined;
    const result = await runIdempotent({
      pool: deps.pool, tenantId, endpoint: DECISION_ENDPOINT, idempotencyKeyHeader: request.headers["idempotency-key"],
      canonical: { review_id: reviewId, decision: body.data.decision, reason: body.data.reason, operator: body.data.operator },
      effect: async (tx) => {
        // Above the four-eyes amount: a proposal by the operator the body names (docs/decisions/0035).
        const outcome = await decideByNamedOperator(tx, { tenantId, reviewId, decision: body.data.decision, reason: body.data.reason, operatorName: body.data.operator, fallbackName: body.data.operator, via: "api_key" });
        if (!outcome.ok) {
          const missingReason = outcome.error.code === "REVIEW_REASON_MISSING";
          const code = missingReason ? "REQUEST_INVALID" : outcome.error.code;
          return problemReply(code, outcome.error.message, { field: outcome.error.position.field ?? null });
        }
        if (outcome.value.kind === "proposed") return jsonReply(202, { proposal: outcome.value.proposal }, outcome.value.proposal.proposal_id);
        decided = outcome.value.outcome;
        return jsonReply(200, decided.decided, reviewId);
      },
    });
    // Counted once the decision committed; a replay answered from the stored response posted nothing.
    if (decided && !result.replayed && result.status === 200) countCompensations(decided);
    return send(reply, result);
  });
}
