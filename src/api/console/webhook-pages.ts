import type { FastifyInstance, FastifyRequest } from "fastify";
import { limits } from "../../config/limits.ts";
import { addWebhookAsAdmin } from "../../operators/access-grants.ts";
import { listProposals } from "../../operators/four-eyes.ts";
import { readWebhookRequest } from "../../outbox/webhooks/webhook-request.ts";
import {
  disableWebhookEndpoint, enableWebhookEndpoint, listWebhookEndpoints, removeWebhookEndpoint,
  type ListedWebhookEndpoint,
} from "../../outbox/webhooks/webhook-store.ts";
import { sendWebhookTestEvent } from "../../outbox/webhooks/webhook-test-event.ts";
import {
  allowed, done, hiddenFields, messageOf, serviceRefusal, runForm, secretPage, type Back,
  type FormTx,
  type ConsoleDeps,
} from "./form-parts.ts";
import { html, type Html } from "./html.ts";
import { proposalForms } from "./proposal-forms.ts";
import { form, outcomePage, shell } from "./shell.ts";
import type { Reply } from "../../requests/reply.ts";
import type { Operator } from "../../operators/operators.ts";
import { finding } from "../../errors/finding.ts";

const back: Back = { href: "/console/webhooks", label: "the webhook endpoints" };
const admins = ["admin"] as const;
type Verb = "test" | "disable" | "enable" | "remove";

function endpointForms(request: FastifyRequest, e: ListedWebhookEndpoint): Html {
  const path = (verb: Verb) => `/console/webhooks/${encodeURIComponent(e.endpointId)}/${verb}`;
  const simple = (verb: Verb, label: string) => html`<form class="inline ${verb}" method="post"
    action="${path(verb)}">${hiddenFields(request)}<button>${label}</button></form>`;
  const withReason = (verb: Verb, label: string) => html`<form class="inline ${verb}"
    method="post" action="${path(verb)}">${hiddenFields(request)}<label>Why ${verb}
    <input name="reason" required></label> <button>${label}</button></form>`;
  return e.status === "active"
    ? html`${simple("test", "Send test event")} ${withReason("disable", "Disable")}
      ${withReason("remove", "Remove")}`
    : html`${simple("enable", "Enable")} ${withReason("remove", "Remove")}`;
}

function addForm(request: FastifyRequest): Html {
  return html`<form id="add-webhook" class="stacked" method="post" action="/console/webhooks">
    ${hiddenFields(request)}<label>URL <input name="url" type="url" required></label>
    <label>Event types (comma-separated, e.g. payment.applied,record.conflict)
      <input name="events" required></label>
    <label>Reason <input name="reason" required></label><button>Add endpoint</button></form>`;
}

/**
 * The tenant's webhook endpoints for an admin (docs/decisions/0106): list, add (an access grant:
 * with four eyes on, a second admin's approval adds it and sees its signing secret once), send a
 * test event, disable, enable and remove (revocations, at once). The role is checked on every
 * route, on the server.
 */
export function registerWebhookPages(pages: FastifyInstance, deps: ConsoleDeps): void {
  pages.get("/console/webhooks", async (request, reply) => {
    const admin = allowed(request, reply, admins, back);
    if (!admin) return reply;
    const csrf = request.operatorSession?.csrfToken ?? "";
    const endpoints = await listWebhookEndpoints(deps.pool, admin.tenantId);
    const rows = endpoints.map((e) => html`<tr data-endpoint="${e.endpointId}"
      data-status="${e.status}"><td data-label="id" class="key">${e.endpointId}</td>
      <td data-label="url" class="key">${e.url}</td>
      <td data-label="events">${e.eventTypes.join(", ")}</td>
      <td data-label="status">${e.status === "active" ? "active"
        : `disabled since ${e.disabledAt ?? "?"}: ${e.disabledReason ?? ""}`}</td>
      <td data-label="held" class="num">${e.heldEvents}</td>
      <td>${endpointForms(request, e)}</td></tr>`);
    const proposals = (await listProposals(deps.pool, admin.tenantId, limits.ingest.listRowsMax))
      .filter((p) => p.subject_kind === "webhook_endpoint" && p.state === "open")
      .map((p) => html`<tr data-proposal="${p.proposal_id}"><td class="key">${p.subject_id}</td>
        <td>${(p.detail?.event_types ?? []).join(", ")}</td><td>proposed by ${p.proposed_by}:
        ${p.reason}</td><td>${proposalForms(admin, csrf, p, "webhooks")}</td></tr>`);
    return shell(request, reply, "Webhook endpoints", html`<p class="note">Events are POSTed
      signed (Standard Webhooks). A removed endpoint gets nothing more and its undelivered events
      become dead letters; a disabled one holds them until enabled.</p>
      <table id="webhooks" class="stack"><tr><th>id</th><th>url</th><th>events</th>
      <th>status</th><th>held</th><th></th></tr>${rows}</table>
      <h2>Add an endpoint</h2>${addForm(request)}
      <h2>Waiting for a second admin</h2><table id="webhook-proposals" class="stack">
      ${proposals}</table>`);
  });
  registerAdd(pages, deps);
  for (const verb of ["test", "disable", "enable", "remove"] as const) {
    registerEndpointAction(pages, deps, verb);
  }
}

function registerAdd(pages: FastifyInstance, deps: ConsoleDeps): void {
  pages.post("/console/webhooks", async (request, reply) => {
    const admin = allowed(request, reply, admins, back);
    if (!admin) return reply;
    const fields = form(request);
    const read = readWebhookRequest(fields.url?.trim() ?? "", fields.events ?? "");
    if (!read.ok) {
      return outcomePage(request, reply, 400, `${read.error.code}: ${read.error.message}`, back);
    }
    const reason = fields.reason?.trim() ?? "";
    let secret: { label: string; value: string } | undefined;
    const answer = await runForm(deps.pool, request, "POST /console/webhooks",
      { url: read.value.url, events: read.value.eventTypes.join(","), reason }, async (tx) => {
        const added = await addWebhookAsAdmin(tx, admin, { ...read.value, reason },
          deps.webhookKeys);
        if (!added.ok) return serviceRefusal(added.error);
        const v = added.value;
        if (v.kind === "proposed") {
          return done(202,
            `proposed ${v.proposal.proposal_id}: the endpoint waits for a second admin`);
        }
        if (v.kind !== "webhook_added") {
          throw new Error("an endpoint's addition answered another grant");
        }
        secret = { label: `Signing secret of ${v.endpoint.endpointId}`, value: v.signingSecret };
        const { endpointId, url } = v.endpoint;
        return done(201, `webhook endpoint ${endpointId} added for ${url} by ${admin.name}`,
          v.endpoint.endpointId);
      });
    return secretPage(request, reply, answer.status, messageOf(answer.body), secret, back);
  });
}

async function endpointEffect(
  tx: FormTx, admin: Operator, verb: Verb,
  input: { endpointId: string; reason: string; key: string },
): Promise<Reply> {
  const { endpointId, reason } = input;
  const unknown = () => serviceRefusal(finding("WEBHOOK_ENDPOINT_UNKNOWN",
    `no webhook endpoint ${endpointId}`, { field: "endpoint_id" }));
  if (verb === "test") {
    const sent = await sendWebhookTestEvent(tx, {
      tenantId: admin.tenantId, endpointId, requestKey: input.key, sentBy: admin.name,
    });
    if (!sent.ok) return serviceRefusal(sent.error);
    return done(200,
      `test event ${sent.value.messageKey} queued for ${endpointId} by ${admin.name}`);
  }
  if (verb === "enable") {
    const enabled = await enableWebhookEndpoint(tx, admin.tenantId, endpointId);
    if (!enabled) return unknown();
    const was = enabled.wasDisabled ? "enabled" : "was not disabled";
    return done(200,
      `${endpointId} ${was} by ${admin.name}; ${enabled.released} held events due again`);
  }
  if (verb === "remove") {
    return await removeWebhookEndpoint(tx, admin.tenantId, endpointId)
      ? done(200, `${endpointId} removed by ${admin.name}: ${reason}`) : unknown();
  }
  const disabled = await disableWebhookEndpoint(tx, admin.tenantId, endpointId,
    `disabled by ${admin.name}: ${reason}`);
  if (!disabled.disabledNow) return unknown();
  return done(200,
    `${endpointId} disabled by ${admin.name}: ${reason}; ${disabled.held} events held`);
}

function registerEndpointAction(pages: FastifyInstance, deps: ConsoleDeps, verb: Verb): void {
  const path = `/console/webhooks/:id/${verb}`;
  pages.post<{ Params: { id: string } }>(path, async (request, reply) => {
    const admin = allowed(request, reply, admins, back);
    if (!admin) return reply;
    const fields = form(request);
    const reason = fields.reason?.trim() ?? "";
    if ((verb === "disable" || verb === "remove") && reason === "") {
      return outcomePage(request, reply, 400, "give a reason; nothing was done", back);
    }
    const endpointId = request.params.id;
    const answer = await runForm(deps.pool, request, `POST /console/webhooks/{id}/${verb}`,
      { endpoint_id: endpointId, reason }, (tx) => endpointEffect(tx, admin, verb,
        { endpointId, reason, key: fields.idempotency_key ?? "" }));
    return outcomePage(request, reply, answer.status, messageOf(answer.body), back);
  });
}
