import type { FastifyInstance } from "fastify";
import type { Pool } from "../../db/pool.ts";
import type { Finding } from "../../errors/finding.ts";
import { correctDifference, explainDifference, listOpenDifferences } from "../../recon/differences.ts";
import { importExternalFile } from "../../recon/external-items.ts";
import type { ExternalFormat } from "../../recon/read-external-file.ts";
import { runReconciliation, showRun } from "../../recon/runs.ts";
import { limits } from "../../config/limits.ts";
import { send, tenantOf } from "../http-context.ts";
import { reconDecisionBody, reconRunBody } from "../schemas.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";

const RESULT_ROWS_MAX = 10_000; // rows of a run returned at once; the counts cover the rest
const formats = new Set(["camt053", "camt054", "ach", "csv"]);

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
    imports.post<{ Querystring: { account?: string; format?: string; name?: string } }>("/v1/reconciliations/imports", async (request, reply) => {
      const { account, format, name } = request.query;
      if (!account) return send(reply, problemReply("REQUEST_INVALID", "name the settlement account: ?account=ID"));
      if (format !== undefined && !formats.has(format)) return send(reply, problemReply("REQUEST_INVALID", "format is camt053, camt054, ach or csv"));
      const content = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const imported = await importExternalFile(deps.pool, {
        tenantId: tenantOf(request).tenantId, accountId: account, name: name ?? "upload", content, ...(format ? { format: format as ExternalFormat } : {}),
      });
      if (!imported.ok) return send(reply, refused(imported.error));
      return send(reply, jsonReply(imported.value.alreadyImported ? 200 : 201, imported.value));
    });
  });

  app.post("/v1/reconciliations/runs", async (request, reply) => {
    const body = reconRunBody.safeParse(request.body);
    if (!body.success) return send(reply, problemReply("REQUEST_INVALID", "send {account, from, to, dry_run?}"));
    const run = await runReconciliation(deps.pool, { tenantId: tenantOf(request).tenantId, accountId: body.data.account, from: body.data.from, to: body.data.to, dryRun: body.data.dry_run === true });
    if (!run.ok) return send(reply, refused([run.error]));
    const v = run.value;
    return send(reply, jsonReply(v.dryRun || v.alreadyRun ? 200 : 201, { run_id: v.runId, account: v.accountId, from: v.from, to: v.to, matched: v.matched, differences: v.differences, dry_run: v.dryRun, already_run: v.alreadyRun }));
  });

  app.get<{ Params: { id: string } }>("/v1/reconciliations/runs/:id", async (request, reply) => {
    const detail = await showRun(deps.pool, tenantOf(request).tenantId, request.params.id, RESULT_ROWS_MAX);
    if (!detail) return send(reply, problemReply("RECON_RUN_UNKNOWN", `no run ${request.params.id}`));
    return send(reply, jsonReply(200, detail));
  });

  app.get<{ Querystring: { account?: string } }>("/v1/reconciliations/differences", async (request, reply) => {
    const open = await listOpenDifferences(deps.pool, tenantOf(request).tenantId, request.query.account, RESULT_ROWS_MAX);
    return send(reply, jsonReply(200, { differences: open }));
  });

  for (const verb of ["correct", "explain"] as const) {
    app.post<{ Params: { id: string } }>(`/v1/reconciliations/differences/:id/${verb}`, async (request, reply) => {
      const body = reconDecisionBody.safeParse(request.body);
      if (!body.success) return send(reply, problemReply("REQUEST_INVALID", "send {reason, operator}"));
      const decision = { tenantId: tenantOf(request).tenantId, differenceId: request.params.id, reason: body.data.reason, operator: body.data.operator };
      const decided = verb === "correct" ? await correctDifference(deps.pool, decision, new Date().toISOString().slice(0, 10)) : await explainDifference(deps.pool, decision);
      if (!decided.ok) return send(reply, refused([decided.error]));
      return send(reply, jsonReply(200, decided.value));
    });
  }
}
