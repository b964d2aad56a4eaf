import type { FastifyInstance } from "fastify";
import {
  countCompensations, reviewItemsById, reviewsPage, type DecisionOutcome,
} from "../../records/index.ts";
import { instantOf, reviewListQuery } from "../list-queries.ts";
import {
  itemAnswer, listAnswer, listReply, partnerIdOfFilter, readListQuery,
} from "../list-reply.ts";
import { reviewExample } from "../list-resources.ts";
import { send, tenantOf, type ApiDependencies } from "../http-context.ts";
import { runIdempotent } from "../../requests/idempotent-request.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import { describeIssues } from "../../errors/schema-issues.ts";
import { reviewDecisionBody } from "../schemas.ts";
import { decideByNamedOperator } from "../../operators/four-eyes.ts";
import { decidedReview, reviewItem } from "../resource-schemas.ts";
import { routeSchema } from "../route-schema.ts";

const DECISION_ENDPOINT = "POST /v1/reviews/{id}/decision";

const listSchema = routeSchema({
  operationId: "listReviews",
  summary: "Held records of the API key's tenant (conflicts, suspects, late returns) a page at a "
    + "time, the oldest first; open by default (filters: state, reason, partner, held range)",
  tags: ["reviews"], auth: "api_key", query: reviewListQuery,
  ok: { 200: listAnswer("review item", reviewItem, reviewExample) },
  problems: { 400: "request_invalid: a limit out of bounds, a cursor it did not give, or an unknown state or reason" },
});
const getSchema = routeSchema({
  operationId: "getReview", summary: "One review item, open or decided", tags: ["reviews"],
  auth: "api_key", params: ["id"], ok: { 200: itemAnswer("the review item", reviewItem, reviewExample) },
  problems: { 404: "review_not_found" },
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
 *   GET /v1/reviews?state=open                 held conflicts and suspects (or decided ones),
 *     a page at a time; GET /v1/reviews/{id} one item
 *   POST /v1/reviews/{id}/decision             replace | apply_as_new | refuse, with reason and
 *     operator; Idempotency-Key required. The decision and its postings commit with the key's claim.
 *     Above the four-eyes amount it is a proposal by the operator named (an approver of the tenant).
 */
export function registerReviewRoutes(app: FastifyInstance, deps: ApiDependencies): void {
  registerReviewReads(app, deps);

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

/** GET /v1/reviews (a page) and GET /v1/reviews/{id}. */
function registerReviewReads(app: FastifyInstance, deps: ApiDependencies): void {
  app.get("/v1/reviews", { schema: listSchema }, async (request, reply) => {
    const read = readListQuery(reviewListQuery, request.query, "review list");
    if (!read.ok) return send(reply, read.reply);
    const { query } = read;
    const tenantId = tenantOf(request).tenantId;
    const partner = await partnerIdOfFilter(deps.pool, tenantId, query.partner);
    const page = await reviewsPage(deps.pool, tenantId, {
      after: read.after, state: query.state, reason: query.reason, partnerId: partner,
      createdFrom: instantOf(query.created_from), createdBefore: instantOf(query.created_before),
      limit: query.limit,
    });
    return send(reply, listReply(page, (item) => item));
  });

  app.get<{ Params: { id: string } }>("/v1/reviews/:id", { schema: getSchema }, async (request, reply) => {
    const tenantId = tenantOf(request).tenantId;
    const [item] = await reviewItemsById(deps.pool, request.params.id, tenantId);
    if (!item) return send(reply, problemReply("REVIEW_NOT_FOUND", `no review ${request.params.id}`));
    return send(reply, jsonReply(200, item));
  });
}
