import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Pool } from "../../db/pool.ts";
import type { Finding } from "../../errors/finding.ts";
import {
  decideDifferenceByNamedOperatorInTransaction,
} from "../../operators/difference-decision.ts";
import { differenceView, differencesPage, findDifference } from "../../recon/differences.ts";
import { importExternalFileInTransaction, importSummaryView } from "../../recon/external-items.ts";
import type { ExternalFormat } from "../../recon/read-external-file.ts";
import { refreshReconMetrics } from "../../recon/recon-metrics.ts";
import {
  runDetailView, runReconciliationInTransaction, runSummaryView, showRun,
} from "../../recon/runs.ts";
import {
  runIdempotent, type IdempotentCall, type IdempotentReply,
} from "../../requests/idempotent-request.ts";
import { limits } from "../../config/limits.ts";
import { send, tenantOf } from "../http-context.ts";
import { reconDecisionBody, reconRunBody } from "../schemas.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import { routeSchema } from "../route-schema.ts";
import { differenceListQuery, instantOf } from "../list-queries.ts";
import { itemAnswer, listAnswer, listReply, readListQuery } from "../list-reply.ts";
import { differenceExample, differenceItem } from "../list-resources.ts";

const RESULT_ROWS_MAX = 10_000; // rows of a run returned at once; the counts cover the rest
const formats = new Set(["camt053", "camt054", "ach", "csv"]);

const tags = ["reconciliation"] as const;
const importSchema = routeSchema({
  operationId: "importReconciliationStatement",
  summary: "Import their side for a settlement account: camt.053, camt.054 or CSV (id,date,amount,currency,reference,description) as the raw body; the same bytes again change nothing",
  tags, auth: "api_key", body: "raw", queryRequired: ["account"], idempotencyKey: true,
  query: { account: { type: "string" }, format: { type: "string", enum: [...formats] }, name: { type: "string" } },
  ok: { 201: "imported: items, seen before, listed twice", 200: "the same bytes were imported before (another key); a repeat of the key answers its stored status and body (Idempotent-Replayed: true)" },
  problems: { 400: "unreadable file, with every finding and its position", 404: "no such account", 409: "request_in_progress", 422: "not a settlement account, another currency, a closing balance that does not add up, or idempotency_key_reuse" },
});
const runSchema = routeSchema({
  operationId: "runReconciliation",
  summary: "Reconcile one settlement account over a period; the same inputs give the same run", tags, auth: "api_key", body: reconRunBody, idempotencyKey: true,
  ok: { 201: "{ run_id, matched, differences: { theirs_only, ours_only, amount_differs, date_outside_window, duplicate_on_their_side, pending, foreign_currency } }", 200: "a dry run, or the same inputs as an earlier run under another key (that run, already_run: true); a repeat of the key answers its stored status and body (Idempotent-Replayed: true)" },
  problems: { 400: "bad period", 404: "no such account", 409: "request_in_progress", 422: "not a settlement account, too many items for one run, or idempotency_key_reuse" },
});
const showRunSchema = routeSchema({ operationId: "getReconciliationRun", summary: "A run: differences (theirs_only first) and matches, each with its reason or rule", tags, auth: "api_key", params: ["id"], ok: { 200: "the run" }, problems: { 404: "recon_run_unknown" } });
const differencesSchema = routeSchema({
  operationId: "listReconciliationDifferences",
  summary: "Differences a page at a time, the oldest found first; open by default (filters: "
    + "state, reason, account, found range)",
  tags, auth: "api_key", query: differenceListQuery,
  ok: { 200: listAnswer("difference", differenceItem, differenceExample) },
  problems: {
    400: "request_invalid: a limit out of bounds, a cursor it did not give, or an unknown state "
      + "or reason",
  },
});
const differenceSchema = routeSchema({
  operationId: "getReconciliationDifference", summary: "One difference, open or decided", tags,
  auth: "api_key", params: ["id"],
  ok: { 200: itemAnswer("the difference", differenceItem, differenceExample) },
  problems: { 404: "recon_difference_unknown" },
});
const decisionSchemas = {
  correct: routeSchema({
    operationId: "correctReconciliationDifference",
    summary: "Post the correction the difference calls for (transfer recon:<difference id>, settlement against recon suspense), once however often asked; above the four-eyes amount a proposal by the named operator instead (docs/decisions/0035)",
    tags, auth: "api_key", params: ["id"], body: reconDecisionBody, idempotencyKey: true,
    ok: { 200: "the difference, corrected", 202: "{ proposal }: waits for a second approver in the console; nothing posted" },
    problems: { 404: "recon_difference_unknown", 409: "recon_difference_decided (already explained), proposal_open or request_in_progress", 422: "recon_difference_not_correctable (moves no money: explain it), four_eyes_proposer_unknown or idempotency_key_reuse" },
  }),
  explain: routeSchema({
    operationId: "explainReconciliationDifference",
    summary: "Close the difference as explained, with a reason; no money moves", tags, auth: "api_key", params: ["id"], body: reconDecisionBody, idempotencyKey: true,
    ok: { 200: "the difference, explained" }, problems: { 404: "recon_difference_unknown", 409: "recon_difference_decided (already corrected), proposal_open (a correction waits for approval) or request_in_progress", 422: "idempotency_key_reuse" },
  }),
};

function refused(findings: Finding[]) {
  const first = findings[0];
  return problemReply(first?.code ?? "REQUEST_INVALID", first?.message ?? "refused", { errors: findings.map((f) => ({ code: f.code, message: f.message, position: f.position })) });
}

/**
 * Reconciliation over HTTP. Every mutation takes an Idempotency-Key (required, as on every
 * mutating route): the effect commits with the key's claim, and a repeat of the key answers the
 * stored status and body (Idempotent-Replayed: true). Under the key each is also idempotent by its
 * own nature: an import is identified by the account and the file's bytes, a run by its inputs, a
 * correction by its difference (transfer key recon:<difference id>), so another key for the same
 * thing answers what is stored (200, already imported or already run).
 */
export function registerReconciliationRoutes(app: FastifyInstance, deps: { pool: Pool }): void {
  registerImportRoute(app, deps);
  app.post("/v1/reconciliations/runs", { schema: runSchema }, async (request, reply) => {
    const body = reconRunBody.safeParse(request.body);
    if (!body.success) return send(reply, problemReply("REQUEST_INVALID", "send {account, from, to, dry_run?}"));
    const tenantId = tenantOf(request).tenantId;
    const { account, from, to } = body.data;
    const dryRun = body.data.dry_run === true;
    const canonical = { account, from, to, dry_run: String(dryRun) };
    return sendChanged(reply, await idempotent(deps.pool, request, canonical, async (tx) => {
      const run = await runReconciliationInTransaction(
        tx, { tenantId, accountId: account, from, to, dryRun });
      if (!run.ok) return refused([run.error]);
      const v = run.value;
      return jsonReply(v.dryRun || v.alreadyRun ? 200 : 201, runSummaryView(v), v.runId);
    }), deps.pool, tenantId);
  });

  app.get<{ Params: { id: string } }>("/v1/reconciliations/runs/:id", { schema: showRunSchema }, async (request, reply) => {
    const detail = await showRun(deps.pool, tenantOf(request).tenantId, request.params.id, RESULT_ROWS_MAX);
    if (!detail) return send(reply, problemReply("RECON_RUN_UNKNOWN", `no run ${request.params.id}`));
    return send(reply, jsonReply(200, runDetailView(detail)));
  });

  registerDifferenceReads(app, deps);

  for (const verb of ["correct", "explain"] as const) {
    app.post<{ Params: { id: string } }>(`/v1/reconciliations/differences/:id/${verb}`, { schema: decisionSchemas[verb] }, async (request, reply) => {
      const body = reconDecisionBody.safeParse(request.body);
      if (!body.success) return send(reply, problemReply("REQUEST_INVALID", "send {reason, operator}"));
      // Above the four-eyes amount a correction is a proposal by the operator named (docs/decisions/0035).
      const tenantId = tenantOf(request).tenantId;
      const differenceId = request.params.id;
      const { reason, operator } = body.data;
      const canonical = { difference_id: differenceId, verb, reason, operator };
      return sendChanged(reply, await idempotent(deps.pool, request, canonical, async (tx) => {
        const decided = await decideDifferenceByNamedOperatorInTransaction(tx, {
          tenantId, differenceId, verb, reason, today: new Date().toISOString().slice(0, 10),
          operatorName: operator, fallbackName: operator, via: "api_key",
        });
        if (!decided.ok) return refused([decided.error]);
        if (decided.value.kind === "proposed") {
          const { proposal } = decided.value;
          return jsonReply(202, { proposal }, proposal.proposal_id);
        }
        return jsonReply(200, differenceView(decided.value.difference), differenceId);
      }), deps.pool, tenantId);
    });
  }
}

/** The route's endpoint as idempotency records name it: "POST /v1/reconciliations/runs". */
function endpointOf(request: FastifyRequest): string {
  const url = request.routeOptions.url ?? request.url;
  return `${request.method} ${url.replace(/:(\w+)/g, "{$1}")}`;
}

/** The effect under the request's Idempotency-Key: it runs at most once per key. */
function idempotent(
  pool: Pool, request: FastifyRequest, canonical: IdempotentCall["canonical"],
  effect: IdempotentCall["effect"],
): Promise<IdempotentReply> {
  return runIdempotent({
    pool, tenantId: tenantOf(request).tenantId, endpoint: endpointOf(request),
    idempotencyKeyHeader: request.headers["idempotency-key"], canonical, effect,
  });
}

/**
 * The answer, once its effect committed; the reconciliation metrics are refreshed after a first
 * answer that may have changed them (never after a replay, which changed nothing).
 */
async function sendChanged(
  reply: FastifyReply, answer: IdempotentReply, pool: Pool, tenantId: string,
): Promise<FastifyReply> {
  if (!answer.replayed && answer.status < 300) await refreshReconMetrics(pool, tenantId);
  return send(reply, answer);
}

/** POST /v1/reconciliations/imports: the raw body is their statement. */
function registerImportRoute(app: FastifyInstance, deps: { pool: Pool }): void {
  void app.register(async (imports) => {
    imports.removeAllContentTypeParsers();
    imports.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: limits.ingest.httpUploadBytesMax }, (_request, body, done) => done(null, body));
    imports.post<{ Querystring: { account?: string; format?: string; name?: string } }>("/v1/reconciliations/imports", { schema: importSchema }, async (request, reply) => {
      const { account, format, name } = request.query;
      if (!account) return send(reply, problemReply("REQUEST_INVALID", "name the settlement account: ?account=ID"));
      if (format !== undefined && !formats.has(format)) return send(reply, problemReply("REQUEST_INVALID", "format is camt053, camt054, ach or csv"));
      // The body is bounded by its size (httpUploadBytesMax) and fed to the same streaming reader as a file.
      const content = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const tenantId = tenantOf(request).tenantId;
      const sha256 = createHash("sha256").update(content).digest("hex");
      const canonical = { account, format: format ?? null, name: name ?? "upload", sha256 };
      return sendChanged(reply, await idempotent(deps.pool, request, canonical, async (tx) => {
        const imported = await importExternalFileInTransaction(tx, {
          tenantId, accountId: account, name: name ?? "upload", content,
          ...(format ? { format: format as ExternalFormat } : {}),
        });
        if (!imported.ok) return refused(imported.error);
        const status = imported.value.alreadyImported ? 200 : 201;
        return jsonReply(status, importSummaryView(imported.value), imported.value.importId);
      }), deps.pool, tenantId);
    });
  });
}

/** GET /v1/reconciliations/differences (a page) and GET /v1/reconciliations/differences/{id}. */
function registerDifferenceReads(app: FastifyInstance, deps: { pool: Pool }): void {
  const list = { schema: differencesSchema };
  app.get("/v1/reconciliations/differences", list, async (request, reply) => {
    const read = readListQuery(differenceListQuery, request.query, "difference list");
    if (!read.ok) return send(reply, read.reply);
    const { query } = read;
    const page = await differencesPage(deps.pool, tenantOf(request).tenantId, {
      after: read.after, state: query.state === "all" ? undefined : query.state,
      reason: query.reason, accountId: query.account, limit: query.limit,
      seenFrom: instantOf(query.created_from), seenBefore: instantOf(query.created_before),
    });
    return send(reply, listReply(page, differenceView));
  });

  const getOne = { schema: differenceSchema };
  app.get<{ Params: { id: string } }>("/v1/reconciliations/differences/:id", getOne, async (request, reply) => {
    const { id } = request.params;
    const difference = await findDifference(deps.pool, tenantOf(request).tenantId, id);
    if (!difference) {
      return send(reply, problemReply("RECON_DIFFERENCE_UNKNOWN", `no difference ${id}`));
    }
    return send(reply, jsonReply(200, differenceView(difference)));
  });
}
