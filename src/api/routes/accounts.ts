import type { FastifyInstance } from "fastify";
import { accountStatement, balanceOf, openAccount, statementDocument } from "../../ledger/index.ts";
import { minorToDecimal } from "../../protocols/iso4217/currency.ts";
import { tenantOf, send, type ApiDependencies } from "../http-context.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import { describeIssues } from "../../errors/schema-issues.ts";
import { accountBody, statementQuery } from "../schemas.ts";
import { statementResource } from "../resource-schemas.ts";
import { routeSchema } from "../route-schema.ts";

const openAccountSchema = routeSchema({
  operationId: "openAccount",
  summary: "Open an account (idempotent on its id; no Idempotency-Key needed)", tags: ["accounts"], auth: "api_key", body: accountBody,
  ok: { 201: "created, or exists with the same kind and currency (the same answer)" }, problems: { 409: "account_exists_different: exists with another kind or currency" },
});
const balanceSchema = routeSchema({
  operationId: "getAccountBalance",
  summary: "An account's balance (decimal string)", tags: ["accounts"], auth: "api_key", params: ["id"],
  ok: { 200: { description: "{ account, currency, balance }", schema: { type: "object", properties: { account: { type: "string" }, currency: { type: "string" }, balance: { type: "string" } } } } },
  problems: { 404: "account_not_found" },
});
const statementSchema = routeSchema({
  operationId: "getAccountStatement",
  summary: "An account's latest entries, oldest first, with transfer key, kind, category and origin", tags: ["accounts"], auth: "api_key", params: ["id"], query: statementQuery,
  ok: { 200: { description: "the statement", schema: statementResource } }, problems: { 404: "account_not_found" },
});

export function registerAccountRoutes(app: FastifyInstance, deps: ApiDependencies): void {
  /**
   * Idempotent on the account id itself, so it needs no Idempotency-Key: a repeat of the same
   * account (same kind and currency) gets the same 201 and body as the first request.
   */
  app.post("/v1/accounts", { schema: openAccountSchema }, async (request, reply) => {
    const body = accountBody.safeParse(request.body);
    if (!body.success) return send(reply, problemReply("REQUEST_INVALID", "the account request is invalid", { errors: describeIssues(body.error) }));
    const tenantId = tenantOf(request).tenantId;
    const opened = await openAccount(deps.pool, { tenantId, accountId: body.data.id, kind: body.data.kind, currency: body.data.currency });
    if (!opened.ok) {
      const code = opened.error.code === "LEDGER_ACCOUNT_EXISTS_DIFFERENT" ? "ACCOUNT_EXISTS_DIFFERENT" : "REQUEST_INVALID";
      return send(reply, problemReply(code, opened.error.message));
    }
    return send(reply, jsonReply(201, { id: body.data.id, kind: body.data.kind, currency: body.data.currency }));
  });

  app.get<{ Params: { id: string } }>("/v1/accounts/:id/balance", { schema: balanceSchema }, async (request, reply) => {
    const balance = await balanceOf(deps.pool, tenantOf(request).tenantId, request.params.id);
    if (!balance) return send(reply, problemReply("ACCOUNT_NOT_FOUND", `no account ${request.params.id}`));
    return send(reply, jsonReply(200, { account: balance.accountId, currency: balance.currency, balance: minorToDecimal(balance.balanceMinor, balance.currency) }));
  });

  /** The account's latest entries, oldest first, each with its transfer's key, kind, category and origin. */
  app.get<{ Params: { id: string } }>("/v1/accounts/:id/statement", { schema: statementSchema }, async (request, reply) => {
    const query = statementQuery.safeParse(request.query);
    if (!query.success) return send(reply, problemReply("REQUEST_INVALID", "the statement query is invalid", { errors: describeIssues(query.error) }));
    const tenantId = tenantOf(request).tenantId;
    const balance = await balanceOf(deps.pool, tenantId, request.params.id);
    if (!balance) return send(reply, problemReply("ACCOUNT_NOT_FOUND", `no account ${request.params.id}`));
    const statement = await accountStatement(deps.pool, tenantId, request.params.id, query.data.limit);
    return send(reply, jsonReply(200, statementDocument(balance, statement)));
  });
}
