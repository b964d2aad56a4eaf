import type { FastifyInstance } from "fastify";
import { limits } from "../../config/limits.ts";
import type { Pool } from "../../db/pool.ts";
import { listIncidents } from "../../incidents/list-incidents.ts";
import { showIncident } from "../../incidents/perimeter.ts";
import { incidentSummaryView, incidentView } from "../../incidents/incident-view.ts";
import { countByReason, decideDifferenceAsOperator } from "../../operators/difference-decision.ts";
import {
  findOutbox, listOutbox, oldestUndeliveredAgeSeconds, outboxMessageView, retryDead,
} from "../../outbox/outbox-store.ts";
import { listWebhookEndpoints, webhookEndpointView } from "../../outbox/webhooks/webhook-store.ts";
import { differenceView, listOpenDifferences } from "../../recon/differences.ts";
import { refreshReconMetrics } from "../../recon/recon-metrics.ts";
import { send } from "../http-context.ts";
import { runIdempotent } from "../../requests/idempotent-request.ts";
import { operatorOf, operatorWithRole } from "../operator-session.ts";
import { opsDifferenceDecisionBody, opsRetryBody } from "../operations-schemas.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import { describeIssues } from "../../errors/schema-issues.ts";
import { refusal } from "./operations-ledger.ts";
import { routeSchema } from "../route-schema.ts";

const tags = ["operations"] as const;
const schemas = {
  differences: routeSchema({
    operationId: "opsListDifferences",
    summary: "Open reconciliation differences by reason: theirs_only first, then the oldest first",
    tags, auth: "session", query: { account: { type: "string" } },
    ok: { 200: "{ by_reason, differences }" },
  }),
  correct: routeSchema({
    operationId: "opsCorrectDifference",
    summary:
      "Correct a difference: posts transfer recon:<id> against recon suspense, the operator " +
      "recorded as decider; above the four-eyes amount a proposal instead (docs/decisions/0035)",
    tags,
    auth: "session_csrf",
    params: ["id"],
    body: opsDifferenceDecisionBody,
    idempotencyKey: true,
    ok: {
      200: "the difference, corrected",
      202: "{ proposal }: waits for a second approver; nothing posted",
    },
    problems: {
      404: "recon_difference_unknown", 409: "recon_difference_decided or proposal_open",
      422: "recon_difference_not_correctable (moves no money: explain it) or idempotency_key_reuse",
    },
  }),
  explain: routeSchema({
    operationId: "opsExplainDifference",
    summary: "Explain a difference: closes it with the reason, no money moves",
    tags,
    auth: "session_csrf",
    params: ["id"],
    body: opsDifferenceDecisionBody,
    idempotencyKey: true,
    ok: { 200: "the difference, explained" },
    problems: {
      404: "recon_difference_unknown",
      409: "recon_difference_decided, or proposal_open (a correction waits for approval)",
      422: "idempotency_key_reuse",
    },
  }),
  deadLetters: routeSchema({
    operationId: "opsListDeadLetters",
    summary:
      "The tenant's dead letters, the newest first, and the service-wide age of the oldest " +
      "undelivered message",
    tags,
    auth: "session",
    ok: { 200: "{ dead_letters, oldest_undelivered_age_seconds }" },
  }),
  retry: routeSchema({
    operationId: "opsRetryDeadLetter",
    summary: "Make a dead letter due again with a fresh attempt budget",
    tags,
    auth: "session_csrf",
    params: ["id"],
    body: opsRetryBody,
    idempotencyKey: true,
    ok: { 200: "{ retried, by }" },
    problems: {
      404: "outbox_message_unknown", 409: "outbox_message_not_dead", 422: "idempotency_key_reuse",
    },
  }),
  webhooks: routeSchema({
    operationId: "opsListWebhooks",
    summary:
      "The tenant's webhook endpoints with their status: active, or disabled (after 410 Gone) " +
      "with the reason and the events held for it; never a secret",
    tags,
    auth: "session",
    ok: { 200: "{ webhooks }" },
  }),
  incidents: routeSchema({
    operationId: "opsListIncidents",
    summary: "The tenant's incidents, the newest first", tags, auth: "session",
    ok: { 200: "{ incidents }" },
  }),
  incident: routeSchema({
    operationId: "opsGetIncident",
    summary: "An incident: its perimeter as taken and every compensation decided", tags,
    auth: "session", params: ["id"], ok: { 200: "the incident" },
    problems: { 404: "incident_unknown" },
  }),
};

/**
 * Reconciliation, outbox and incidents for signed-in operators (docs/decisions/0031):
 *   GET  /v1/ops/differences             open differences, theirs_only first, the oldest first
 *   POST /v1/ops/differences/{id}/correct|explain   the operator's decision (approver)
 *   GET  /v1/ops/outbox/dead-letters     dead letters, the newest first, with the outbox lag
 *   POST /v1/ops/outbox/{id}/retry       a dead letter due again (approver)
 *   GET  /v1/ops/webhooks                webhook endpoints: active, or disabled with why and
 *                                        what is held
 *   GET  /v1/ops/incidents, /v1/ops/incidents/{id}
 */
export function registerRecoveryOperations(scope: FastifyInstance, deps: { pool: Pool }): void {
  registerDifferenceOperations(scope, deps);
  registerOutboxOperations(scope, deps);
  registerWebhookOperations(scope, deps);
  registerIncidentOperations(scope, deps);
}

function registerDifferenceOperations(scope: FastifyInstance, deps: { pool: Pool }): void {
  scope.get<{ Querystring: { account?: string } }>(
    "/v1/ops/differences",
    { schema: schemas.differences },
    async (request, reply) => {
      const differences = await listOpenDifferences(
        deps.pool, operatorOf(request).tenantId, request.query.account, limits.ingest.listRowsMax,
      );
      return send(reply, jsonReply(200, {
        by_reason: countByReason(differences), differences: differences.map(differenceView),
      }));
    },
  );

  for (const verb of ["correct", "explain"] as const) {
    const options = { schema: schemas[verb] };
    const path = `/v1/ops/differences/:id/${verb}`;
    scope.post<{ Params: { id: string } }>(path, options, async (request, reply) => {
      const operator = operatorWithRole(request, reply, "approver");
      if (!operator) return reply;
      const body = opsDifferenceDecisionBody.safeParse(request.body);
      if (!body.success) {
        return send(
          reply,
          problemReply("REQUEST_INVALID", "a decision gives a reason", {
            errors: describeIssues(body.error),
          }),
        );
      }
      const differenceId = request.params.id;
      const result = await runIdempotent({
        pool: deps.pool,
        tenantId: operator.tenantId,
        endpoint: `POST /v1/ops/differences/{id}/${verb}`,
        idempotencyKeyHeader: request.headers["idempotency-key"],
        canonical: {
          difference_id: differenceId, reason: body.data.reason, operator_id: operator.operatorId,
        },
        effect: async (tx) => {
          const decided = await decideDifferenceAsOperator(tx, operator, {
            differenceId, verb, reason: body.data.reason,
            today: new Date().toISOString().slice(0, 10),
          });
          if (!decided.ok) return refusal(decided.error);
          if (decided.value.kind === "proposed") {
            return jsonReply(
              202, { proposal: decided.value.proposal }, decided.value.proposal.proposal_id,
            );
          }
          return jsonReply(
            200, differenceView(decided.value.difference),
            decided.value.difference.correctionKey ?? differenceId,
          );
        },
      });
      if (!result.replayed && result.status === 200) {
        await refreshReconMetrics(deps.pool, operator.tenantId);
      }
      return send(reply, result);
    });
  }
}

function registerOutboxOperations(scope: FastifyInstance, deps: { pool: Pool }): void {
  scope.get(
    "/v1/ops/outbox/dead-letters",
    { schema: schemas.deadLetters },
    async (request, reply) =>
      send(
        reply,
        jsonReply(200, {
          dead_letters: (await listOutbox(
            deps.pool, operatorOf(request).tenantId, { state: "dead" }, limits.outbox.listRowsMax,
          )).map(outboxMessageView),
          oldest_undelivered_age_seconds: await oldestUndeliveredAgeSeconds(deps.pool),
        }),
      ),
  );

  scope.post<{ Params: { id: string } }>(
    "/v1/ops/outbox/:id/retry",
    { schema: schemas.retry },
    async (request, reply) => {
      const operator = operatorWithRole(request, reply, "approver");
      if (!operator) return reply;
      if (!opsRetryBody.safeParse(request.body ?? undefined).success) {
        return send(
          reply, problemReply("REQUEST_INVALID", "a retry has no body beyond csrf_token"),
        );
      }
      const id = request.params.id;
      if (!/^\d{1,18}$/.test(id)) {
        return send(reply, problemReply("OUTBOX_MESSAGE_UNKNOWN", `no outbox message ${id}`));
      }
      const result = await runIdempotent({
        pool: deps.pool,
        tenantId: operator.tenantId,
        endpoint: "POST /v1/ops/outbox/{id}/retry",
        idempotencyKeyHeader: request.headers["idempotency-key"],
        canonical: { outbox_id: id, operator_id: operator.operatorId },
        effect: async (tx) => {
          if (await retryDead(tx, operator.tenantId, id)) {
            return jsonReply(200, { retried: id, by: operator.name }, id);
          }
          const found = await findOutbox(tx, operator.tenantId, id);
          return found
            ? problemReply("OUTBOX_MESSAGE_NOT_DEAD", `outbox message ${id} is ${found.state}`)
            : problemReply("OUTBOX_MESSAGE_UNKNOWN", `no outbox message ${id}`);
        },
      });
      return send(reply, result);
    },
  );
}

function registerWebhookOperations(scope: FastifyInstance, deps: { pool: Pool }): void {
  scope.get("/v1/ops/webhooks", { schema: schemas.webhooks }, async (request, reply) => {
    const endpoints = await listWebhookEndpoints(deps.pool, operatorOf(request).tenantId);
    return send(
      reply,
      jsonReply(200, {
        webhooks: endpoints.map(webhookEndpointView),
      }),
    );
  });
}

function registerIncidentOperations(scope: FastifyInstance, deps: { pool: Pool }): void {
  scope.get("/v1/ops/incidents", { schema: schemas.incidents }, async (request, reply) =>
    send(
      reply,
      jsonReply(200, {
        incidents: (await listIncidents(
          deps.pool, operatorOf(request).tenantId, limits.ingest.listRowsMax,
        )).map(incidentSummaryView),
      }),
    ),
  );

  scope.get<{ Params: { id: string } }>(
    "/v1/ops/incidents/:id",
    { schema: schemas.incident },
    async (request, reply) => {
      const incident = await showIncident(
        deps.pool, operatorOf(request).tenantId, request.params.id,
      );
      return send(
        reply,
        incident
          ? jsonReply(200, incidentView(incident))
          : problemReply("INCIDENT_UNKNOWN", `no incident ${request.params.id}`),
      );
    },
  );
}
