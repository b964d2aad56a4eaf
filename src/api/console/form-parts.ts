import { randomUUID } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Pool } from "../../db/pool.ts";
import type { Finding } from "../../errors/finding.ts";
import {
  runIdempotent, type IdempotentCall, type IdempotentReply,
} from "../../requests/idempotent-request.ts";
import { jsonReply, problemReply, type Reply } from "../../requests/reply.ts";
import type { ErrorCode } from "../../errors/catalog.ts";
import type { Operator } from "../../operators/operators.ts";
import type { WebhookSecretKeys } from "../../outbox/webhooks/secret-box.ts";
import { operatorOf } from "../operator-session.ts";
import { html, page, type Html } from "./html.ts";
import { form, outcomePage, render } from "./shell.ts";

/**
 * What the console's newer forms share: the hidden CSRF token and per-render Idempotency-Key, an
 * effect run once per key (the console's own endpoint names, docs/decisions/0106), and the
 * outcome page with its way back.
 */
export type Back = { href: string; label: string };

/** The transaction a form's effect runs in, as runIdempotent hands it over. */
export type FormTx = Parameters<IdempotentCall["effect"]>[0];

/** What the console's pages are built on: the pool, and the key webhook secrets are sealed with. */
export interface ConsoleDeps { pool: Pool; webhookKeys: () => WebhookSecretKeys }

export function hiddenFields(request: FastifyRequest): Html {
  const csrf = request.operatorSession?.csrfToken ?? "";
  return html`<input type="hidden" name="csrf_token" value="${csrf}"><input type="hidden"
    name="idempotency_key" value="${randomUUID()}">`;
}

export function messageOf(body: string): string {
  const parsed = JSON.parse(body) as { message?: string; detail?: string };
  return parsed.message ?? parsed.detail ?? "";
}

/** A serviceRefusal of the service as the stored answer: its code's status, code and message. */
export function serviceRefusal(error: Finding): Reply {
  return problemReply(error.code as ErrorCode, `${error.code}: ${error.message}`);
}

export function done(status: number, message: string, resourceId: string | null = null): Reply {
  return jsonReply(status, { message }, resourceId);
}

/** The operator when their role allows the form; else the 403 page already sent. */
export function allowed(
  request: FastifyRequest, reply: FastifyReply, roles: readonly Operator["role"][], back: Back,
): Operator | undefined {
  const operator = operatorOf(request);
  if (roles.includes(operator.role)) return operator;
  void outcomePage(request, reply, 403,
    `OPERATOR_ROLE_FORBIDDEN: ${operator.name} is a ${operator.role}; ` +
    `this needs ${roles.join(" or ")}`,
    back);
  return undefined;
}

/** Runs a form's effect once per its Idempotency-Key, under the console endpoint's name. */
export function runForm(
  pool: Pool, request: FastifyRequest, endpoint: string, canonical: Record<string, string>,
  effect: (tx: FormTx) => Promise<Reply>,
): Promise<IdempotentReply> {
  const operator = operatorOf(request);
  return runIdempotent({
    pool, tenantId: operator.tenantId, endpoint,
    idempotencyKeyHeader: form(request).idempotency_key,
    canonical: { ...canonical, operator_id: operator.operatorId }, effect,
  });
}

/**
 * The answer to a grant that made a secret: the message, and the secret shown this once (it is in
 * no table and no stored answer; a repeated request shows the message alone).
 */
export function secretPage(
  request: FastifyRequest, reply: FastifyReply, status: number, message: string,
  secret: { label: string; value: string } | undefined, back: Back,
): FastifyReply {
  const shown = secret
    ? html`<p class="secret">${secret.label} (shown once, store it now):
      <code id="secret">${secret.value}</code></p>`
    : html``;
  const body = html`<p id="outcome" class="${status < 300 ? "" : "error"}">${message}</p>${shown}
    <p><a href="${back.href}">Back to ${back.label}</a></p>`;
  return render(reply, status, page(status < 300 ? "Done" : "Refused", body,
    { operator: request.operatorSession?.operator.name ?? "" }));
}
