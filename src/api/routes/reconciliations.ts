import type { FastifyInstance } from "fastify";
import type { Pool } from "../../db/pool.ts";
import type { Finding } from "../../errors/finding.ts";
import { decideDifferenceByNamedOperator } from "../../operators/difference-decision.ts";
import { listOpenDifferences } from "../../recon/differences.ts";
import { importExternalFile } from "../../recon/external-items.ts";
import type { ExternalFormat } from "../../recon/read-external-file.ts";
import { runReconciliation, showRun } from "../../recon/runs.ts";
import { limits } from "../../config/limits.ts";
import { send, tenantOf } from "../http-context.ts";
import { reconDecisionBody, reconRunBody } from "../schemas.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import { routeSchema } from "../route-schema.ts";

const RESULT_ROWS_MAX = 10_000; // rows of a run returned at once; the counts cover the rest
const formats = new Set(["camt053", "camt054", "ach", "csv"]);

const tags = ["reconciliation"] as const;
const importSchema = routeSchema({
  operationId: "importReconciliationStatement",
  summary: "Import their side for a settlement account: camt.053, camt.054 or CSV (id,date,amount,currency,reference,description) as the raw body; the same bytes again change nothing",
  tags, auth: "api_key", body: "raw", queryRequired: ["account"],
  query: { account: { type: "string" }, format: { type: "string", enum: [...formats] }, name: { type: "string" } },
  ok: { 201: "imported: items, seen before, listed twice", 200: "the same bytes were imported before" },
  problems: { 400: "unreadable file, with every finding and its position", 404: "no such account", 422: "not a settlement account, another currency, or a closing balance that does not add up" },
});
const runSchema = routeSchema({
  operationId: "runReconciliation",
  summary: "Reconcile one settlement account over a period; the same inputs give the same run", tags, auth: "api_key", body: reconRunBody,
  ok: { 201: "{ run_id, matched, differences: { theirs_only, ours_only, amount_differs, date_outside_window, duplicate_on_their_side, pending, foreign_currency } }", 200: "a dry run, or the same inputs as an earlier run (that run)" },
  problems: { 400: "bad period", 404: "no such account", 422: "not a settlement account, or too many items for one run" },
});
const showRunSchema = routeSchema({ operationId: "getReconciliationRun", summary: "A run: differences (theirs_only first) and matches, each with its reason or rule", tags, auth: "api_key", params: ["id"], ok: { 200: "the run" }, problems: { 404: "recon_run_unknown" } });
const differencesSchema = routeSchema({ operationId: "listReconciliationDifferences", summary: "Open differences, theirs_only first, then the oldest", tags, auth: "api_key", query: { account: { type: "string" } }, ok: { 200: "{ differences }" } });
const decisionSchemas = {
  correct: routeSchema({
    operationId: "correctReconciliationDifference",
    summary: "Post the correction the difference calls for (transfer recon:<difference id>, settlement against recon suspense), once however often asked; above the four-eyes amount a proposal by the named operator instead (docs/decisions/0035)",
    tags, auth: "api_key", params: ["id"], body: reconDecisionBody,
    ok: { 200: "the difference, corrected", 202: "{ proposal }: waits for a second approver in the console; nothing posted" },
    problems: { 404: "recon_difference_unknown", 409: "recon_difference_decided (already explained) or proposal_open", 422: "recon_difference_not_correctable (moves no money: explain it) or four_eyes_proposer_unknown" },
  }),
  explain: routeSchema({
    operationId: "explainReconciliationDifference",
    summary: "Close the difference as explained, with a reason; no money moves", tags, auth: "api_key", params: ["id"], body: reconDecisionBody,
    ok: { 200: "the difference, explained" }, problems: { 404: "recon_difference_unknown", 409: "recon_difference_decided (already corrected) or proposal_open (a correction waits for approval)" },
  }),
};

function refused(findings: Finding[]) {
  const first = findings[0];
  return problemReply(first?.code ?? "REQUEST_INVALID", first?.message ?? "refused", { errors: findings.map((f) => ({ code: f.code, message: f.message, position: f.position })) });
}

/**
 * Reconciliation over HTTP. Every mutation here is idempotent by its own nature, without an
 * Idempotency-Key: an import is identified by the account and the file's bytes, a run by its
 * inputs, a correction by its difference (transfer key recon:<difference id>).
 */
export function registerReconciliationRoutes(app: FastifyInstance, deps: { pool: Pool }): void {
  void app.register(async (imports) => {
    imports.removeAllContentTypeParsers();
    imports.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: limits.ingest.httpUploadBytesMax }, (_request, body, done) => done(null, body));
    imports.post<{ Querystring: { account?: string; format?: string; name?: string } }>("/v1/reconciliations/imports", { schema: importSchema }, async (request, reply) => {
      const { account, format, name } = request.query;
      if (!account) return send(reply, problemReply("REQUEST_INVALID", "name the settlement account: ?account=ID"));
      if (format !== undefined && !formats.has(format)) return send(reply, problemReply("REQUEST_INVALID", "format is camt053, camt054, ach or csv"));
      // The body is bounded by its size (httpUploadBytesMax) and fed to the same streaming reader as a file.
      const content = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const imported = await importExternalFile(deps.pool, {
        tenantId: tenantOf(request).tenantId, accountId: account, name: name ?? "upload", content, ...(format ? { format: format as ExternalFormat } : {}),
      });
      if (!imported.ok) return send(reply, refused(imported.error));
      return send(reply, jsonReply(imported.value.alreadyImported ? 200 : 201, imported.value));
    });
  });

  app.post("/v1/reconciliations/runs", { schema: runSchema }, async (request, reply) => {
    const body = reconRunBody.safeParse(request.body);
    if (!body.success) return send(reply, problemReply("REQUEST_INVALID", "send {account, from, to, dry_run?}"));
    const run = await runReconciliation(deps.pool, { tenantId: tenantOf(request).tenantId, accountId: body.data.account, from: body.data.from, to: body.data.to, dryRun: body.data.dry_run === true });
    if (!run.ok) return send(reply, refused([run.error]));
    const v = run.value;
    return send(reply, jsonReply(v.dryRun || v.alreadyRun ? 200 : 201, { run_id: v.runId, account: v.accountId, from: v.from, to: v.to, matched: v.matched, differences: v.differences, dry_run: v.dryRun, already_run: v.alreadyRun }));
  });

  app.get<{ Params: { id: string } }>("/v1/reconciliations/runs/:id", { schema: showRunSchema }, async (request, reply) => {
    const detail = await showRun(deps.pool, tenantOf(request).tenantId, request.params.id, RESULT_ROWS_MAX);
    if (!detail) return send(reply, problemReply("RECON_RUN_UNKNOWN", `no run ${request.params.id}`));
    return send(reply, jsonReply(200, detail));
  });

  app.get<{ Querystring: { account?: string } }>("/v1/reconciliations/differences", { schema: differencesSchema }, async (request, reply) => {
    const open = await listOpenDifferences(deps.pool, tenantOf(request).tenantId, request.query.account, RESULT_ROWS_MAX);
    return send(reply, jsonReply(200, { differences: open }));
  });

  for (const verb of ["correct", "explain"] as const) {
    app.post<{ Params: { id: string } }>(`/v1/reconciliations/differences/:id/${verb}`, { schema: decisionSchemas[verb] }, async (request, reply) => {
      const body = reconDecisionBody.safeParse(request.body);
      if (!body.success) return send(reply, problemReply("REQUEST_INVALID", "send {reason, operator}"));
      // Above the four-eyes amount a correction is a proposal by the operator named (docs/decisions/0035).
      const decided = await decideDifferenceByNamedOperator(deps.pool, {
        tenantId: tenantOf(request).tenantId, differenceId: request.params.id, verb, reason: body.data.reason, today: new Date().toISOString().slice(0, 10),
        operatorName: body.data.operator, fallbackName: body.data.operator, via: "api_key",
      });
      if (!decided.ok) return send(reply, refused([decided.error]));
      if (decided.value.kind === "proposed") return send(reply, jsonReply(202, { proposal: decided.value.proposal }));
      return send(reply, jsonReply(200, decided.value.difference));
    });
  }
}
