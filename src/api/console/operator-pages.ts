import type { FastifyInstance, FastifyRequest } from "fastify";
import { limits } from "../../config/limits.ts";
import type { Pool } from "../../db/pool.ts";
import { rotateSecretAsAdmin } from "../../operators/access-grants.ts";
import { listProposals } from "../../operators/four-eyes.ts";
import {
  disableOperator, listOperators, type ListedOperator,
} from "../../operators/operator-admin.ts";
import {
  allowed, done, hiddenFields, messageOf, serviceRefusal, runForm, secretPage, type Back,
} from "./form-parts.ts";
import { html, type Html } from "./html.ts";
import { proposalForms } from "./proposal-forms.ts";
import { form, outcomePage, shell } from "./shell.ts";

export const operatorsBack: Back = { href: "/console/operators", label: "the operators" };
const admins = ["admin"] as const;

function operatorActions(request: FastifyRequest, listed: ListedOperator): Html {
  if (listed.disabledAt !== null) return html``;
  const id = encodeURIComponent(listed.operatorId);
  const action = (verb: string) => `/console/operators/${id}/${verb}`;
  return html`<form class="inline disable" method="post" action="${action("disable")}">
    ${hiddenFields(request)}<label>Why disable ${listed.name} <input name="reason" required></label>
    <button>Disable</button></form>
    <form class="inline rotate" method="post" action="${action("secret")}">${hiddenFields(request)}
    <label>Why a new secret for ${listed.name} <input name="reason" required></label>
    <button>Rotate secret</button></form>`;
}

function stateOf(listed: ListedOperator): string {
  return listed.disabledAt === null ? "active"
    : `disabled by ${listed.disabledBy ?? "?"} at ${listed.disabledAt}: ` +
      (listed.disabledReason ?? "");
}

/**
 * The tenant's operators for an admin (docs/decisions/0106): the list, disabling one at once (a
 * revocation), and a new secret (an access grant: with four eyes on, proposed, and made by a
 * second admin's approval, which shows it once). Every route checks the role on the server.
 */
export function registerOperatorPages(pages: FastifyInstance, deps: { pool: Pool }): void {
  pages.get("/console/operators", async (request, reply) => {
    const admin = allowed(request, reply, admins, operatorsBack);
    if (!admin) return reply;
    const csrf = request.operatorSession?.csrfToken ?? "";
    const listed = await listOperators(deps.pool, admin.tenantId, limits.ingest.listRowsMax);
    const names = new Map(listed.map((o) => [o.operatorId, o.name]));
    const rows = listed.map((o) => html`<tr data-operator="${o.name}"
      class="${o.disabledAt === null ? "" : "disabled"}"><td data-label="name">${o.name}</td>
      <td data-label="role">${o.role}</td><td data-label="since">${o.createdAt}</td>
      <td data-label="state" class="state">${stateOf(o)}</td>
      <td>${o.operatorId === admin.operatorId ? html`<span class="note">you</span>`
        : operatorActions(request, o)}</td></tr>`);
    const proposals = (await listProposals(deps.pool, admin.tenantId, limits.ingest.listRowsMax))
      .filter((p) => p.subject_kind === "operator" && p.state === "open")
      .map((p) => html`<tr data-proposal="${p.proposal_id}"><td>new secret for
        ${names.get(p.subject_id) ?? p.subject_id}</td><td>proposed by ${p.proposed_by}:
        ${p.reason}</td><td>${proposalForms(admin, csrf, p, "operators")}</td></tr>`);
    return shell(request, reply, "Operators", html`<p class="note">Disabling takes effect at once
      (no sign-in, its sessions end; its decisions stay on record). A new secret ends the old one
      and its sessions; with four eyes on, it waits for a second admin, who sees it once.</p>
      <table id="operators" class="stack"><tr><th>name</th><th>role</th><th>since</th>
      <th>state</th><th></th></tr>${rows}</table>
      <h2>Waiting for a second admin</h2><table id="operator-proposals" class="stack">
      ${proposals}</table>`);
  });
  registerDisable(pages, deps);
  registerRotate(pages, deps);
}

function registerDisable(pages: FastifyInstance, deps: { pool: Pool }): void {
  const path = "/console/operators/:id/disable";
  pages.post<{ Params: { id: string } }>(path, async (request, reply) => {
    const admin = allowed(request, reply, admins, operatorsBack);
    if (!admin) return reply;
    const reason = form(request).reason?.trim() ?? "";
    const operatorId = request.params.id;
    const answer = await runForm(deps.pool, request, "POST /console/operators/{id}/disable",
      { operator_id_disabled: operatorId, reason }, async (tx) => {
        const disabled = await disableOperator(tx, admin, { operatorId, reason });
        if (!disabled.ok) return serviceRefusal(disabled.error);
        const { name, sessionsEnded } = disabled.value;
        return done(200,
          `${name} disabled by ${admin.name}: ${reason} (${sessionsEnded} sessions ended)`,
          operatorId);
      });
    return outcomePage(request, reply, answer.status, messageOf(answer.body), operatorsBack);
  });
}

function registerRotate(pages: FastifyInstance, deps: { pool: Pool }): void {
  const path = "/console/operators/:id/secret";
  pages.post<{ Params: { id: string } }>(path, async (request, reply) => {
    const admin = allowed(request, reply, admins, operatorsBack);
    if (!admin) return reply;
    const reason = form(request).reason?.trim() ?? "";
    const operatorId = request.params.id;
    let secret: string | undefined;
    const answer = await runForm(deps.pool, request, "POST /console/operators/{id}/secret",
      { operator_id_rotated: operatorId, reason }, async (tx) => {
        const rotated = await rotateSecretAsAdmin(tx, admin, { operatorId, reason });
        if (!rotated.ok) return serviceRefusal(rotated.error);
        const v = rotated.value;
        if (v.kind === "proposed") {
          return done(202,
            `proposed ${v.proposal.proposal_id}: the new secret waits for a second admin`);
        }
        if (v.kind !== "secret_rotated") throw new Error("a rotation answered another grant");
        secret = v.secret;   // shown below, never stored with the answer
        return done(200, `new secret for ${v.operatorName} by ${admin.name}; ` +
          "the old one and its sessions ended");
      });
    const shown = secret === undefined ? undefined : { label: "New secret", value: secret };
    return secretPage(request, reply, answer.status, messageOf(answer.body), shown, operatorsBack);
  });
}

