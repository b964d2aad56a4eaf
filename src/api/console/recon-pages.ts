import { createHash } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { limits } from "../../config/limits.ts";
import type { Pool } from "../../db/pool.ts";
import { listAccounts } from "../../ledger/index.ts";
import { importExternalFileInTransaction } from "../../recon/external-items.ts";
import type { ExternalFormat } from "../../recon/read-external-file.ts";
import { refreshReconMetrics } from "../../recon/recon-metrics.ts";
import { runReconciliationInTransaction } from "../../recon/runs.ts";
import { runIdempotent } from "../../requests/idempotent-request.ts";
import { operatorOf } from "../operator-session.ts";
import {
  allowed, done, hiddenFields, messageOf, serviceRefusal, runForm, type Back,
} from "./form-parts.ts";
import { html } from "./html.ts";
import { reconImportScript } from "./recon-script.ts";
import { form, outcomePage, shell } from "./shell.ts";

const back: Back = { href: "/console/reconciliation", label: "reconciliation" };
const deciders = ["approver", "admin"] as const;
const formats = new Set<ExternalFormat>(["camt053", "camt054", "ach", "csv"]);

/**
 * Reconciliation from the browser (issue 33): import their statement of a settlement account
 * and run a reconciliation over a period, by the same service calls as POST
 * /v1/reconciliations/imports and /runs and `clearline recon import|run`. The differences page
 * shows what a run found, both sides' lines.
 */
export function registerReconPages(pages: FastifyInstance, deps: { pool: Pool }): void {
  pages.get("/console/reconciliation", async (request, reply) => {
    const operator = operatorOf(request);
    const accounts = (await listAccounts(deps.pool, operator.tenantId))
      .filter((a) => a.kind === "settlement");
    const options = accounts.map((a) =>
      html`<option value="${a.accountId}">${a.accountId}</option>`);
    const today = new Date().toISOString().slice(0, 10);
    if (operator.role === "viewer") {
      return shell(request, reply, "Reconciliation", html`<p class="note">A viewer reads the
        <a href="/console/differences">differences</a>; importing and running need an
        approver.</p>`);
    }
    return shell(request, reply, "Reconciliation", html`
      <h2>Import their statement</h2>
      <form id="import-form" class="stacked"><label>Settlement account
        <select id="import-account" name="account" required>${options}</select></label>
        <label>Statement file (camt.053, camt.054, CSV
          id,date,amount,currency,reference,description)
          <input type="file" id="statement" required></label>
        <label>Format <select id="import-format"><option value="">detect</option>
          <option value="camt053">camt.053</option><option value="camt054">camt.054</option>
          <option value="csv">CSV</option><option value="ach">ACH</option></select></label>
        <button id="import-button">Import</button></form><p id="import-result"></p>
      <h2>Run a reconciliation</h2>
      <form id="run-form" class="stacked" method="post" action="/console/reconciliation/runs">
        ${hiddenFields(request)}<label>Settlement account
        <select name="account" required>${options}</select></label>
        <label>From <input type="date" name="from" value="${today}" required></label>
        <label>To <input type="date" name="to" value="${today}" required></label>
        <button id="run-button">Run</button></form>`, reconImportScript);
  });
  registerRunForm(pages, deps);
  registerImportUpload(pages, deps);
}

function registerRunForm(pages: FastifyInstance, deps: { pool: Pool }): void {
  pages.post("/console/reconciliation/runs", async (request, reply) => {
    const operator = allowed(request, reply, deciders, back);
    if (!operator) return reply;
    const { account = "", from = "", to = "" } = form(request);
    const answer = await runForm(deps.pool, request, "POST /v1/reconciliations/runs",
      { account, from, to, dry_run: "false" }, async (tx) => {
        const run = await runReconciliationInTransaction(
          tx, { tenantId: operator.tenantId, accountId: account, from, to, dryRun: false });
        if (!run.ok) return serviceRefusal(run.error);
        const v = run.value;
        const counts = Object.entries(v.differences).filter(([, n]) => n > 0)
          .map(([reason, n]) => `${n} ${reason}`).join(", ") || "no differences";
        return done(v.alreadyRun ? 200 : 201,
          `run ${v.runId}${v.alreadyRun ? " (the same inputs as before)" : ""}: ` +
          `${v.matched} matched; ${counts}`,
          v.runId);
      });
    if (!answer.replayed && answer.status < 300) {
      await refreshReconMetrics(deps.pool, operator.tenantId);
    }
    return outcomePage(request, reply, answer.status, messageOf(answer.body),
      answer.status < 300 ? { href: "/console/differences", label: "the differences" } : back);
  });
}

/** Their statement as the raw body (the script sends it), as POST /v1/reconciliations/imports. */
function registerImportUpload(pages: FastifyInstance, deps: { pool: Pool }): void {
  void pages.register(async (uploads) => {
    uploads.removeAllContentTypeParsers();
    const bodyLimit = limits.ingest.httpUploadBytesMax;
    uploads.addContentTypeParser("*", { parseAs: "buffer", bodyLimit },
      (_request, body, done) => done(null, body));
    uploads.post<{ Querystring: { account?: string; format?: string; name?: string } }>(
      "/console/reconciliation/imports", { bodyLimit: limits.ingest.httpUploadBytesMax },
      async (request, reply) => {
        const operator = operatorOf(request);
        const json = (status: number, value: unknown) => reply.code(status).send(value);
        if (operator.role === "viewer") {
          return json(403, { detail: "OPERATOR_ROLE_FORBIDDEN: a viewer cannot import" });
        }
        const { account = "", name = "upload" } = request.query;
        const format = formats.has(request.query.format as ExternalFormat)
          ? request.query.format as ExternalFormat : undefined;
        const content = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const sha256 = createHash("sha256").update(content).digest("hex");
        const answer = await runIdempotent({
          pool: deps.pool, tenantId: operator.tenantId,
          endpoint: "POST /v1/reconciliations/imports",
          idempotencyKeyHeader: request.headers["idempotency-key"],
          canonical: { account, format: format ?? null, name, sha256 },
          effect: async (tx) => {
            const imported = await importExternalFileInTransaction(tx, {
              tenantId: operator.tenantId, accountId: account, name, content,
              ...(format ? { format } : {}),
            });
            const first = imported.ok ? undefined : imported.error[0];
            if (first) return serviceRefusal(first);
            if (!imported.ok) return done(400, "refused");
            const v = imported.value;
            return done(v.alreadyImported ? 200 : 201,
              `${name}: ${v.alreadyImported ? "imported before, nothing changed" : "imported"}` +
              ` (${v.format}) ${v.items} items, ${v.seenBefore} seen before, ` +
              `${v.duplicates} listed twice`,
              v.importId);
          },
        });
        if (!answer.replayed && answer.status < 300) {
          await refreshReconMetrics(deps.pool, operator.tenantId);
        }
        return reply.code(answer.status).header("content-type", answer.contentType)
          .send(answer.body);
      },
    );
  });
}
