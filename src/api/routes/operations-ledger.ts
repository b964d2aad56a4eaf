import type { FastifyInstance } from "fastify";
import type { Pool } from "../../db/pool.ts";
import type { ErrorCode } from "../../errors/catalog.ts";
import type { Finding } from "../../errors/finding.ts";
import { listSuspensePostings } from "../../records/index.ts";
import {
  accountStatement, balanceOf, listAccounts, statementDocument,
} from "../../ledger/index.ts";
import { moveAsOperator } from "../../operators/four-eyes.ts";
import { minorToDecimal } from "../../protocols/iso4217/currency.ts";
import { send } from "../http-context.ts";
import { runIdempotent } from "../../requests/idempotent-request.ts";
import { operatorOf, operatorWithRole } from "../operator-session.ts";
import { suspenseMoveBody } from "../operations-schemas.ts";
import { jsonReply, problemReply, type Reply } from "../../requests/reply.ts";
import { describeIssues } from "../../errors/schema-issues.ts";
import { statementQuery } from "../schemas.ts";
import { statementResource } from "../resource-schemas.ts";
import { routeSchema } from "../route-schema.ts";

const tags = ["operations"] as const;
const schemas = {
  accounts: routeSchema({ operationId: "opsListAccounts", summary: "The tenant's accounts with balances", tags, auth: "session", ok: { 200: "{ accounts }" } }),
  statement: routeSchema({ operationId: "opsGetAccountStatement", summary: "An account's entries with their origins, corrections marked", tags, auth: "session", params: ["id"], query: statementQuery, ok: { 200: { description: "the statement", schema: statementResource } }, problems: { 404: "account_not_found" } }),
  suspense: routeSchema({ operationId: "opsListSuspensePostings", summary: "Records posted to suspense because no alias matched", tags, auth: "session", ok: { 200: "{ postings }" } }),
  move: routeSchema({
    operationId: "opsMoveSuspensePosting",
    summary: "Move a suspense posting to the account it belongs to (transfer <posting key>:suspense-move); four eyes above the amount", tags, auth: "session_csrf",
    body: suspenseMoveBody, idempotencyKey: true,
    ok: { 200: "{ suspense_move }", 202: "{ proposal }: waits for a second approver; nothing posted" },
    problems: { 404: "suspense_posting_not_found", 409: "suspense_moved (to another account already) or proposal_open", 422: "ledger_insufficient_funds, a currency mismatch or idempotency_key_reuse" },
  }),
};

/** A refusal of the record core, the ledger or four eyes as a problem reply (the one catalog). */
export function refusal(error: Finding): Reply {
  const code = error.code === "REVIEW_REASON_MISSING" ? "REQUEST_INVALID" : error.code;
  return problemReply(code as ErrorCode, error.message, { field: error.position.field ?? null });
}

/**
 * Accounts and suspense for signed-in operators (docs/decisions/0026):
 *   GET /v1/ops/accounts                       every account of the tenant with its balance
 *   GET /v1/ops/accounts/{id}/statement        entries with their origins, corrections marked
 *   GET /v1/ops/suspense                       records posted to suspense (no alias matched)
 *   POST /v1/ops/suspense/moves                move one out to an account (four eyes above the amount)
 */
export function registerLedgerOperations(scope: FastifyInstance, deps: { pool: Pool }): void {
  scope.get("/v1/ops/accounts", { schema: schemas.accounts }, async (request, reply) => {
    const tenantId = operatorOf(request).tenantId;
    const accounts = [];
    for (const { accountId: id, kind, currency } of await listAccounts(deps.pool, tenantId)) {
      const balance = await balanceOf(deps.pool, tenantId, id);
      const shown = balance ? minorToDecimal(balance.balanceMinor, balance.currency) : null;
      accounts.push({ id, kind, currency, balance: shown });
    }
    return send(reply, jsonReply(200, { accounts }));
  });

  scope.get<{ Params: { id: string } }>("/v1/ops/accounts/:id/statement", { schema: schemas.statement }, async (request, reply) => {
    const query = statementQuery.safeParse(request.query);
    if (!query.success) return send(reply, problemReply("REQUEST_INVALID", "the statement query is invalid", { errors: describeIssues(query.error) }));
    const tenantId = operatorOf(request).tenantId;
    const balance = await balanceOf(deps.pool, tenantId, request.params.id);
    if (!balance) return send(reply, problemReply("ACCOUNT_NOT_FOUND", `no account ${request.params.id}`));
    return send(reply, jsonReply(200, statementDocument(balance, await accountStatement(deps.pool, tenantId, request.params.id, query.data.limit))));
  });

  scope.get("/v1/ops/suspense", { schema: schemas.suspense }, async (request, reply) =>
    send(reply, jsonReply(200, { postings: await listSuspensePostings(deps.pool, { tenantId: operatorOf(request).tenantId }) })));

  scope.post("/v1/ops/suspense/moves", { schema: schemas.move }, async (request, reply) => {
    const operator = operatorWithRole(request, reply, "approver");
    if (!operator) return reply;
    const body = suspenseMoveBody.safeParse(request.body);
    if (!body.success) return send(reply, problemReply("REQUEST_INVALID", "a move names posting_key, to_account and reason", { errors: describeIssues(body.error) }));
    const result = await runIdempotent({
      pool: deps.pool, tenantId: operator.tenantId, endpoint: "POST /v1/ops/suspense/moves", idempotencyKeyHeader: request.headers["idempotency-key"],
      canonical: { posting_key: body.data.posting_key, to_account: body.data.to_account, reason: body.data.reason, operator_id: operator.operatorId },
      effect: async (tx) => {
        const outcome = await moveAsOperator(tx, operator, { postingKey: body.data.posting_key, targetAccount: body.data.to_account, reason: body.data.reason });
        if (!outcome.ok) return refusal(outcome.error);
        if (outcome.value.kind === "proposed") return jsonReply(202, { proposal: outcome.value.proposal }, outcome.value.proposal.proposal_id);
        return jsonReply(200, { suspense_move: outcome.value.move }, outcome.value.move.move_key);
      },
    });
    return send(reply, result);
  });
}
