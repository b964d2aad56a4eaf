import type { FastifyInstance, FastifyReply } from "fastify";
import {
  accountsPage, accountStatement, asOfDateOf, balanceOf, balanceOfKind, balancesOnDate,
  openAccount, statementDocument, type BalanceKind,
} from "../../ledger/index.ts";
import { decodePageCursor, encodePageCursor } from "../page-cursor.ts";
import { minorToDecimal } from "../../protocols/iso4217/currency.ts";
import { tenantOf, send, type ApiDependencies } from "../http-context.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import { describeIssues } from "../../errors/schema-issues.ts";
import { accountBody, accountListQuery, balanceQuery, statementQuery } from "../schemas.ts";
import { statementResource } from "../resource-schemas.ts";
import { routeSchema } from "../route-schema.ts";

const openAccountSchema = routeSchema({
  operationId: "openAccount",
  summary: "Open an account (idempotent on its id; no Idempotency-Key needed)", tags: ["accounts"], auth: "api_key", body: accountBody,
  ok: { 201: "created, or exists with the same kind and currency (the same answer)" }, problems: { 409: "account_exists_different: exists with another kind or currency" },
});
const balanceOnDateProperties = {
  as_of: { type: "string", description: "the date of the balance (YYYY-MM-DD)" },
  kind: { type: "string", enum: ["booked", "settled", "available"] },
  available_rule: { type: "string", enum: ["booked", "settled-credits"] },
  booked: { type: "string" }, settled: { type: "string" }, available: { type: "string" },
};
const balanceSchema = routeSchema({
  operationId: "getAccountBalance",
  summary: "An account's balance (decimal string): today's exact balance, or with as_of and kind "
    + "its booked, settled or available balance on a date (docs/decisions/0102)",
  tags: ["accounts"], auth: "api_key", params: ["id"], query: balanceQuery,
  ok: { 200: { description: "{ account, currency, balance } and, with as_of or kind, the date, "
    + "the kind, the account's available rule and all three balances on that date",
  schema: { type: "object", properties: {
    account: { type: "string" }, currency: { type: "string" }, balance: { type: "string" },
    ...balanceOnDateProperties,
  } } } },
  problems: { 400: "request_invalid: as_of is not a date the calendars cover, or kind unknown",
    404: "account_not_found" },
});
const statementSchema = routeSchema({
  operationId: "getAccountStatement",
  summary: "An account's latest entries, oldest first, with transfer key, kind, category and origin", tags: ["accounts"], auth: "api_key", params: ["id"], query: statementQuery,
  ok: { 200: { description: "the statement", schema: statementResource } }, problems: { 404: "account_not_found" },
});

const accountResource = {
  type: "object",
  properties: { id: { type: "string" }, kind: { type: "string" }, currency: { type: "string" } },
};
const listAccountsSchema = routeSchema({
  operationId: "listAccounts",
  summary: "The tenant's accounts by id, a page at a time (cursor paging; optionally one kind)",
  tags: ["accounts"], auth: "api_key", query: accountListQuery,
  ok: {
    200: {
      description:
        "{ data: [{ id, kind, currency }], has_more, next_cursor }: next_cursor null at the end",
      schema: {
        type: "object",
        properties: {
          data: { type: "array", items: accountResource }, has_more: { type: "boolean" },
          next_cursor: { type: ["string", "null"] },
        },
      },
    },
  },
  problems: {
    400: "request_invalid: a limit out of bounds, an unknown kind or a cursor it did not give",
  },
});
const getAccountSchema = routeSchema({
  operationId: "getAccount",
  summary: "One account: its kind, currency and balance (decimal string)", tags: ["accounts"],
  auth: "api_key", params: ["id"],
  ok: {
    200: {
      description: "{ id, kind, currency, balance }",
      schema: {
        ...accountResource,
        properties: { ...accountResource.properties, balance: { type: "string" } },
      },
    },
  },
  problems: { 404: "account_not_found" },
});

export function registerAccountRoutes(app: FastifyInstance, deps: ApiDependencies): void {
  registerAccountReads(app, deps);
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
    const query = balanceQuery.safeParse(request.query);
    if (!query.success) {
      const errors = describeIssues(query.error);
      return send(reply, problemReply("REQUEST_INVALID", "the balance query is invalid", { errors }));
    }
    const tenantId = tenantOf(request).tenantId;
    if (query.data.as_of !== undefined || query.data.kind !== undefined) {
      return sendBalanceOnDate(reply, deps, tenantId, request.params.id, query.data);
    }
    const balance = await balanceOf(deps.pool, tenantId, request.params.id);
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

/** The balance of a kind on a date, with all three beside it (docs/decisions/0102). */
async function sendBalanceOnDate(
  reply: FastifyReply, deps: ApiDependencies, tenantId: string, accountId: string,
  query: { as_of?: string | undefined; kind?: BalanceKind | undefined },
): Promise<FastifyReply> {
  const asOf = asOfDateOf(query.as_of ?? new Date().toISOString().slice(0, 10), { field: "as_of" });
  if (!asOf.ok) return send(reply, problemReply("REQUEST_INVALID", asOf.error.message));
  const kind = query.kind ?? "booked";
  const balances = await balancesOnDate(deps.pool, tenantId, accountId, asOf.value);
  if (!balances) return send(reply, problemReply("ACCOUNT_NOT_FOUND", `no account ${accountId}`));
  const decimal = (minor: bigint) => minorToDecimal(minor, balances.currency);
  return send(reply, jsonReply(200, {
    account: accountId, currency: balances.currency,
    balance: decimal(balanceOfKind(balances, kind)),
    as_of: balances.asOf, kind, available_rule: balances.availableRule,
    booked: decimal(balances.bookedMinor), settled: decimal(balances.settledMinor),
    available: decimal(balances.availableMinor),
  }));
}

/** GET /v1/accounts (a page) and GET /v1/accounts/{id}. */
function registerAccountReads(app: FastifyInstance, deps: ApiDependencies): void {
  app.get("/v1/accounts", { schema: listAccountsSchema }, async (request, reply) => {
    const query = accountListQuery.safeParse(request.query);
    if (!query.success) {
      return send(reply, problemReply("REQUEST_INVALID", "the account list query is invalid",
        { errors: describeIssues(query.error) }));
    }
    const after = query.data.cursor === undefined ? undefined : decodePageCursor(query.data.cursor);
    if (query.data.cursor !== undefined && after === undefined) {
      return send(reply, problemReply("REQUEST_INVALID", "the cursor is not one this API gave out",
        { errors: [{ path: "cursor", message: "unknown cursor" }] }));
    }
    const page = await accountsPage(deps.pool, tenantOf(request).tenantId, {
      limit: query.data.limit,
      ...(after === undefined ? {} : { afterAccountId: after }),
      ...(query.data.kind === undefined ? {} : { kind: query.data.kind }),
    });
    const last = page.accounts.at(-1);
    return send(reply, jsonReply(200, {
      data: page.accounts.map((a) => ({ id: a.accountId, kind: a.kind, currency: a.currency })),
      has_more: page.hasMore,
      next_cursor: page.hasMore && last ? encodePageCursor(last.accountId) : null,
    }));
  });

  const getOne = { schema: getAccountSchema };
  app.get<{ Params: { id: string } }>("/v1/accounts/:id", getOne, async (request, reply) => {
    const { id } = request.params;
    const balance = await balanceOf(deps.pool, tenantOf(request).tenantId, id);
    if (!balance) return send(reply, problemReply("ACCOUNT_NOT_FOUND", `no account ${id}`));
    return send(reply, jsonReply(200, {
      id: balance.accountId, kind: balance.kind, currency: balance.currency,
      balance: minorToDecimal(balance.balanceMinor, balance.currency),
    }));
  });
}
