import type { FastifyInstance } from "fastify";
import { limits } from "../../config/limits.ts";
import type { Pool } from "../../db/pool.ts";
import { listFiles } from "../../files/report.ts";
import {
  balanceOf, listAccounts, projectionLag, statementDocument, statementWithRunningBalance,
} from "../../ledger/index.ts";
import { minorToDecimal } from "../../protocols/iso4217/currency.ts";
import { oldestUndeliveredAgeSeconds } from "../../outbox/outbox-store.ts";
import { decideAsOperator } from "../../operators/four-eyes.ts";
import { authenticateOperator } from "../../operators/operators.ts";
import { openSession } from "../../operators/sessions.ts";
import { runIdempotent } from "../../requests/idempotent-request.ts";
import { checkSession, operatorOf, sessionCookie } from "../operator-session.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import {
  filesPerDayChart, OUTBOX_LAG_SCALE_SECONDS, outboxLagChart, projectionLagChart,
} from "./charts.ts";
import { registerProposalPages } from "./proposal-forms.ts";
import { registerRecordPages } from "./record-pages.ts";
import { registerFleetPage } from "./fleet-page.ts";
import { registerPicturesPage } from "./pictures-page.ts";
import { registerRecoveryPages } from "./recovery-pages.ts";
import { form, outcomePage, refusedPage, render, shell } from "./shell.ts";
import { registerReviewQueuePage } from "./review-queue.ts";
import { registerFilePage } from "./file-page.ts";
import { registerSourcePages } from "./source-pages.ts";
import { registerOperatorPages } from "./operator-pages.ts";
import { registerWebhookPages } from "./webhook-pages.ts";
import type { ConsoleDeps } from "./form-parts.ts";
import { currentConfig } from "../../config/config.ts";
import {
  loadWebhookSecretKeys, type WebhookSecretKeys,
} from "../../outbox/webhooks/secret-box.ts";
import { registerReconPages } from "./recon-pages.ts";
import { registerSuspensePages } from "./suspense-pages.ts";
import { html, page, type Html } from "./html.ts";
import { uploadScript } from "./upload-script.ts";



/**
 * The operators' console (docs/decisions/0026): server-rendered pages over the same services as
 * /v1/ops, plain forms carrying the session's CSRF token and a per-render Idempotency-Key, and
 * one inline script for the re-upload preview. No asset from elsewhere: it works offline.
 */
export function registerConsoleRoutes(
  app: FastifyInstance, given: { pool: Pool; webhookKeys?: WebhookSecretKeys },
): void {
  let loaded = given.webhookKeys;
  // The key `clearline serve` delivers with; read (or made) on first use, as the CLI's
  // `webhook add` does (docs/decisions/0065).
  const webhookKeys = (): WebhookSecretKeys => loaded ??= loadWebhookSecretKeys({
    home: currentConfig().home, secretHex: currentConfig().webhookSecretKey,
  });
  const deps: ConsoleDeps = { pool: given.pool, webhookKeys };
  void app.register(async (scope) => {
    // HTML pages and forms, not the API: left out of /openapi.json (their JSON twins are under
    // /v1/ops).
    scope.addHook("onRoute", (route) => { route.schema = { ...route.schema, hide: true }; });
    scope.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string", bodyLimit: limits.http.bodyBytesMax },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );

    scope.get("/console", async (_request, reply) =>
      render(reply, 200, page("Sign in", signInForm())),
    );
    scope.post("/console/sign-in", async (request, reply) => {
      const fields = form(request);
      const operator = await authenticateOperator(deps.pool, {
        tenant: fields.tenant ?? "", name: fields.name ?? "", secret: fields.secret ?? "",
      });
      if (!operator) return render(reply, 401, page("Sign in", html`<p class="error" id="error">No operator with this tenant, name and secret.</p>${signInForm()}`));
      const session = await openSession(deps.pool, operator);
      return reply
        .header(
          "set-cookie",
          sessionCookie(
            request, session.token, Math.floor(limits.http.operatorSessionTtlMs / 1_000),
          ),
        )
        .redirect("/console/files", 303);
    });

    void scope.register(async (pages) => {
      pages.addHook("preHandler", async (request, reply) => {
        const refused = await checkSession(deps.pool, request);
        if (refused === "OPERATOR_SESSION_MISSING") return reply.redirect("/console", 303);
        if (refused) return render(reply, 403, page("Refused", html`<p id="outcome" class="error">The form lacks this session's CSRF token; nothing was done.</p>`));
        return undefined;
      });
      registerPages(pages, deps);
      registerRecoveryPages(pages, deps);
      registerRecordPages(pages, deps);
      registerProposalPages(pages, deps);
      registerFleetPage(pages, deps);
      registerPicturesPage(pages, deps);
      registerOperatorPages(pages, deps);
      registerWebhookPages(pages, deps);
    });
  });
}

function signInForm(): Html {
  return html`<form method="post" action="/console/sign-in">
    <p><label>Tenant <input name="tenant" required></label></p><p><label>Operator <input name="name" required></label></p>
    <p><label>Secret <input name="secret" type="password" required></label></p><p><button id="sign-in">Sign in</button></p></form>`;
}


function registerPages(pages: FastifyInstance, deps: { pool: Pool }): void {
  registerFilesPage(pages, deps);
  registerReviewQueuePage(pages, deps);
  registerFilePage(pages, deps);
  registerReviewDecision(pages, deps);
  registerSuspensePages(pages, deps);
  registerSourcePages(pages, deps);
  registerReconPages(pages, deps);
  registerAccountPages(pages, deps);
}

/** Received files per day and by status, and the re-upload preview of a corrected file. */
function registerFilesPage(pages: FastifyInstance, deps: { pool: Pool }): void {
  pages.get("/console/files", async (request, reply) => {
    const files = await listFiles(deps.pool, operatorOf(request).tenantId, {
      limit: limits.ingest.listRowsMax,
    });
    const rows = files.map((f) => html`<tr class="${f.status === "rejected" ? "rejected" : ""}"
      data-file="${f.file_id}"><td data-label="received">${f.received_at}</td>
      <td data-label="partner">${f.partner}</td>
      <td data-label="name"><a href="/console/files/${encodeURIComponent(f.file_id)}">${f.name}</a></td>
      <td data-label="status">${f.status}</td><td data-label="records" class="num">${f.records}</td>
      <td data-label="outcomes">${Object.entries(f.outcomes).filter(([, n]) => n > 0)
        .map(([k, n]) => `${k} ${n}`).join(", ")}</td>
      <td data-label="findings">${f.errors.map((e) =>
        `${e.line !== undefined ? `line ${e.line}: ` : ""}${e.code}`).join("; ")}</td></tr>`);
    return shell(request, reply, "Files", html`${filesPerDayChart(files)}
      <h2>Re-upload a corrected file</h2><p><label>Corrected file <input type="file" id="file"></label> <button id="preview-button">Preview</button></p>
      <div id="preview"></div><p id="actions" hidden><button id="confirm">Confirm</button> <button id="cancel">Cancel</button></p><p id="result"></p>
      <h2>Received</h2><table id="files" class="stack"><tr><th>received</th><th>partner</th><th>name</th><th>status</th><th>records</th><th>outcomes</th><th>findings</th></tr>${rows}</table>`, uploadScript);
  });
}

/** A decision on a held record from the review queue's form. */
function registerReviewDecision(pages: FastifyInstance, deps: { pool: Pool }): void {
  pages.post<{ Params: { id: string } }>(
    "/console/reviews/:id/decision",
    async (request, reply) => {
      const operator = operatorOf(request);
      const fields = form(request);
      const decision =
        fields.decision === "replace" ||
        fields.decision === "apply_as_new" ||
        fields.decision === "refuse"
          ? fields.decision
          : undefined;
      if (operator.role === "viewer") {
        return outcomePage(request, reply, 403, "a viewer cannot decide");
      }
      if (!decision) {
        return refusedPage(request, reply, "REVIEW_DECISION_MISSING",
          "choose replace, apply as new or refuse; nothing was decided");
      }
      if (!fields.reason?.trim()) {
        return refusedPage(request, reply, "REVIEW_REASON_MISSING",
          "give a reason; nothing was decided");
      }
      const reviewId = request.params.id;
      const answer = await runIdempotent({
        pool: deps.pool,
        tenantId: operator.tenantId,
        endpoint: "POST /v1/ops/reviews/{id}/decision",
        idempotencyKeyHeader: fields.idempotency_key,
        canonical: {
          review_id: reviewId, decision, reason: fields.reason.trim(),
          operator_id: operator.operatorId,
        },
        effect: async (tx) => {
          const outcome = await decideAsOperator(tx, operator, {
            reviewId, decision, reason: fields.reason?.trim() ?? "",
          });
          if (!outcome.ok) {
            return problemReply(
              "REQUEST_INVALID", `${outcome.error.code}: ${outcome.error.message}`,
            );
          }
          if (outcome.value.kind === "proposed") {
            return jsonReply(202, {
              message: `proposed ${outcome.value.proposal.proposal_id}: waits for a second approver; nothing posted`,
            });
          }
          const d = outcome.value.outcome.decided;
          return jsonReply(200, {
            message: `${d.decision} by ${d.operator}: ${[d.compensation_key, d.posting_key].filter(Boolean).join(", ") || "nothing posted"}`,
          });
        },
      });
      return outcomePage(
        request,
        reply,
        answer.status,
        (JSON.parse(answer.body) as { message?: string; detail?: string }).message ??
          (JSON.parse(answer.body) as { detail: string }).detail,
      );
    },
  );
}

/** Balances with the projection and outbox lag, and each account's statement. */
function registerAccountPages(pages: FastifyInstance, deps: { pool: Pool }): void {
  pages.get("/console/accounts", async (request, reply) => {
    const tenantId = operatorOf(request).tenantId;
    const lines: Html[] = [];
    for (const { accountId: id, kind } of await listAccounts(deps.pool, tenantId)) {
      const balance = await balanceOf(deps.pool, tenantId, id);
      const noLines = { lines: [], truncated: false };
      const amount = balance ? statementDocument(balance, noLines).balance : "";
      const currency = balance?.currency ?? "";
      const link = html`<a href="/console/accounts/${encodeURIComponent(id)}">${id}</a>`;
      const shown = html`<td class="num">${amount} ${currency}</td>`;
      lines.push(html`<tr><td>${link}</td><td>${kind}</td>${shown}</tr>`);
    }
    // The bar's scale: 1,000 unfolded rows fill it (a folding step takes far more at once; a full
    // bar means folding has stopped).
    return shell(request, reply, "Accounts", html`<div style="display:flex;gap:32px">${projectionLagChart(await projectionLag(deps.pool, tenantId), 1_000)}${outboxLagChart(await oldestUndeliveredAgeSeconds(deps.pool), OUTBOX_LAG_SCALE_SECONDS)}</div><table id="accounts"><tr><th>account</th><th>kind</th><th>balance</th></tr>${lines}</table>`);
  });

  pages.get<{ Params: { id: string } }>("/console/accounts/:id", async (request, reply) => {
    const tenantId = operatorOf(request).tenantId;
    const read = await statementWithRunningBalance(
      deps.pool, tenantId, request.params.id, limits.ingest.listRowsMax);
    if (!read) return outcomePage(request, reply, 404, `no account ${request.params.id}`);
    const { balance, statement, balanceAfterMinor } = read;
    const doc = statementDocument(balance, statement) as {
      balance: string; entries: Array<Record<string, string>>;
    };
    const rows = doc.entries.map((e, index) => html`<tr class="${e.category === "technical_correction" ? "changed" : ""}">
      <td data-label="time">${e.created_at}</td><td data-label="kind">${e.kind}</td>
      <td data-label="category">${e.category}</td><td data-label="origin">${e.origin}</td>
      <td data-label="transfer" class="key">${e.transfer_key}</td>
      <td data-label="direction">${e.direction}</td><td class="num" data-label="amount">${e.amount}</td>
      <td class="num running-balance" data-label="balance after">${minorToDecimal(
        balanceAfterMinor[index] ?? 0n, balance.currency)}</td></tr>`);
    const truncated = statement.truncated
      ? html`<p class="note">The last ${statement.lines.length} entries; the running balance counts back from the balance.</p>`
      : html``;
    return shell(request, reply, `Statement of ${request.params.id}`, html`<p>Balance <strong id="balance">${doc.balance}</strong> ${balance.currency}</p>${truncated}
      <table id="statement" class="stack"><tr><th>time</th><th>kind</th><th>category</th><th>origin</th><th>transfer</th><th>direction</th><th>amount</th><th>balance after</th></tr>${rows}</table>`);
  });

}

