import { randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { approveInConsole, type AccessGrant } from "../../operators/access-grants.ts";
import { cancelProposal, type ApprovedDecision, type Proposal } from "../../operators/four-eyes.ts";
import type { Operator } from "../../operators/operators.ts";
import { refreshReconMetrics } from "../../recon/recon-metrics.ts";
import { runIdempotent } from "../../requests/idempotent-request.ts";
import { operatorOf } from "../operator-session.ts";
import { jsonReply, problemReply, type Reply } from "../../requests/reply.ts";
import type { Finding } from "../../errors/finding.ts";
import { html, type Html } from "./html.ts";
import { form, outcomePage } from "./shell.ts";
import { secretPage, type ConsoleDeps } from "./form-parts.ts";

/** Where an approval or a cancellation returns to: the page its form was on. */
const backTo = {
  reviews: { href: "/console/reviews", label: "the review queue" },
  differences: { href: "/console/differences", label: "the differences" },
  operators: { href: "/console/operators", label: "the operators" },
  webhooks: { href: "/console/webhooks", label: "the webhook endpoints" },
} as const;
type Back = keyof typeof backTo;
const backOf = (value: string | undefined): (typeof backTo)[Back] =>
  backTo[value !== undefined && value in backTo ? value as Back : "reviews"];

/**
 * An open proposal's buttons for an approver: Approve (its decision runs, once; the proposer is
 * refused) and Cancel with a reason (nothing moves). Each form carries the session's CSRF token
 * and its own Idempotency-Key, so a double click is one decision (docs/decisions/0035).
 */
export function proposalForms(operator: Operator, csrf: string, proposal: Proposal, back: Back): Html {
  if (proposal.state !== "open" || operator.role === "viewer") return html``;
  const hidden = html`<input type="hidden" name="csrf_token" value="${csrf}"><input type="hidden" name="idempotency_key" value="${randomUUID()}"><input type="hidden" name="back" value="${back}">`;
  return html`<form class="inline approve" method="post" action="/console/proposals/${proposal.proposal_id}/approval">${hidden}<button>Approve</button></form>
    <form class="inline cancel" method="post" action="/console/proposals/${proposal.proposal_id}/cancellation">${hidden}
      <label>Why cancel <input name="reason" required></label> <button>Cancel</button></form>`;
}

function approvalMessage(proposalId: string, approver: string, approved: ApprovedDecision): string {
  if (approved.kind === "recon_difference") return `approved ${proposalId} by ${approver}: corrected, ${approved.difference.correctionKey ?? "nothing posted"}`;
  if (approved.kind === "suspense_move") return `approved ${proposalId} by ${approver}: ${approved.move.move_key}`;
  return `approved ${proposalId} by ${approver}`;
}

/** Who may not approve is told so with the code's status; anything else is the request's fault. */
function approvalRefusal(error: Finding): Reply {
  const code = error.code === "FOUR_EYES_SELF_APPROVAL" || error.code === "FOUR_EYES_APPROVER_NOT_ADMIN"
    ? error.code : "REQUEST_INVALID";
  return problemReply(code, `${error.code}: ${error.message}`);
}

function grantMessage(proposalId: string, approver: string, grant: AccessGrant): string {
  const by = `approved ${proposalId} by ${approver}`;
  if (grant.kind === "secret_rotated") return `${by}: new secret for ${grant.operatorName}`;
  return `${by}: webhook endpoint ${grant.endpoint.endpointId} added for ${grant.endpoint.url}`;
}

/** The console's approval and cancellation of proposals, over the same functions and idempotency endpoints as /v1/ops. */
export function registerProposalPages(pages: FastifyInstance, deps: ConsoleDeps): void {
  pages.post<{ Params: { id: string } }>("/console/proposals/:id/approval", async (request, reply) => {
    const operator = operatorOf(request);
    const back = backOf(form(request).back);
    if (operator.role === "viewer") return outcomePage(request, reply, 403, "a viewer cannot approve", back);
    const proposalId = request.params.id;
    let approved: ApprovedDecision | undefined;
    let secret: { label: string; value: string } | undefined;
    const answer = await runIdempotent({
      pool: deps.pool, tenantId: operator.tenantId, endpoint: "POST /v1/ops/proposals/{id}/approval", idempotencyKeyHeader: form(request).idempotency_key,
      canonical: { proposal_id: proposalId, operator_id: operator.operatorId },
      effect: async (tx) => {
        const outcome = await approveInConsole(tx, operator, proposalId, deps.webhookKeys);
        if (!outcome.ok) return approvalRefusal(outcome.error);
        if (outcome.value.kind === "access") {
          // The secret is shown on this page once and kept in no table or stored answer (0106).
          const grant = outcome.value.grant;
          secret = grant.kind === "secret_rotated"
            ? { label: `New secret of ${grant.operatorName}`, value: grant.secret }
            : {
              label: `Signing secret of ${grant.endpoint.endpointId}`, value: grant.signingSecret,
            };
          return jsonReply(200, { message: grantMessage(proposalId, operator.name, grant) });
        }
        approved = outcome.value.approved;
        const message = approvalMessage(proposalId, operator.name, outcome.value.approved);
        return jsonReply(200, { message });
      },
    });
    if (approved?.kind === "recon_difference" && !answer.replayed) await refreshReconMetrics(deps.pool, operator.tenantId);
    const body = JSON.parse(answer.body) as { message?: string; detail?: string };
    const shown = body.message ?? body.detail ?? "";
    return secretPage(request, reply, answer.status, shown, secret, back);
  });

  pages.post<{ Params: { id: string } }>("/console/proposals/:id/cancellation", async (request, reply) => {
    const operator = operatorOf(request);
    const fields = form(request);
    const back = backOf(fields.back);
    const reason = fields.reason?.trim() ?? "";
    if (operator.role === "viewer") return outcomePage(request, reply, 403, "a viewer cannot cancel", back);
    if (!reason) return outcomePage(request, reply, 400, "give a reason", back);
    const proposalId = request.params.id;
    const answer = await runIdempotent({
      pool: deps.pool, tenantId: operator.tenantId, endpoint: "POST /v1/ops/proposals/{id}/cancellation", idempotencyKeyHeader: fields.idempotency_key,
      canonical: { proposal_id: proposalId, reason, operator_id: operator.operatorId },
      effect: async (tx) => {
        const cancelled = await cancelProposal(tx, operator, proposalId, reason);
        if (!cancelled.ok) return problemReply("REQUEST_INVALID", `${cancelled.error.code}: ${cancelled.error.message}`);
        return jsonReply(200, { message: `cancelled ${proposalId} by ${operator.name}: nothing moved` });
      },
    });
    const body = JSON.parse(answer.body) as { message?: string; detail?: string };
    return outcomePage(request, reply, answer.status, body.message ?? body.detail ?? "", back);
  });
}
