import type { Queryable } from "../db/pool.ts";
import type { Tx } from "../db/transaction.ts";
import { limits } from "../config/limits.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import type { WebhookSecretKeys } from "../outbox/webhooks/secret-box.ts";
import { newSigningSecret } from "../outbox/webhooks/signature.ts";
import {
  addWebhookEndpoint, countWebhookEndpoints, type WebhookEndpoint,
} from "../outbox/webhooks/webhook-store.ts";
import type { WebhookRequest } from "../outbox/webhooks/webhook-request.ts";
import { approveProposal, type ApprovedDecision } from "./four-eyes.ts";
import { fourEyesAboveMinor, type Operator } from "./operators.ts";
import { activeOperator, refuseUnlessAdmin, rotateOperatorSecret } from "./operator-admin.ts";
import {
  markApproved, openProposalFor, propose, proposalOf, type Proposal, type ProposalInput,
} from "./proposals.ts";

/**
 * Access grants (docs/decisions/0106): a new operator secret and a new webhook endpoint each hand
 * someone a working credential. When the tenant has four eyes on (any four-eyes amount set), an
 * admin's grant is a proposal, and another admin's approval makes it happen and shows its secret
 * once, to that approver. Without four eyes the admin's grant happens at once. No money moves:
 * the proposal's amount is 0 in XXX (ISO 4217: no currency).
 */
export type AccessGrant =
  | { kind: "secret_rotated"; operatorName: string; secret: string }
  | { kind: "webhook_added"; endpoint: WebhookEndpoint; signingSecret: string };
export type AccessOutcome = AccessGrant | { kind: "proposed"; proposal: Proposal };

const noMoney = { amountMinor: "0", currency: "XXX", targetAccount: null } as const;

async function needsSecondAdmin(db: Queryable, tenantId: string): Promise<boolean> {
  return (await fourEyesAboveMinor(db, tenantId)) !== undefined;
}

export function isAccessProposal(proposal: Pick<Proposal, "subject_kind">): boolean {
  return proposal.subject_kind === "operator" || proposal.subject_kind === "webhook_endpoint";
}

async function proposeGrant(
  tx: Tx, admin: Operator, input: Omit<ProposalInput, keyof typeof noMoney>,
): Promise<Result<AccessOutcome, Finding>> {
  const proposal = await propose(tx, admin, { ...input, ...noMoney }, "console");
  return proposal.ok ? ok({ kind: "proposed", proposal: proposal.value }) : proposal;
}

/** An admin's new secret for an operator: now, or proposed under four eyes. */
export async function rotateSecretAsAdmin(
  tx: Tx, admin: Operator, input: { operatorId: string; reason: string },
): Promise<Result<AccessOutcome, Finding>> {
  const allowed = refuseUnlessAdmin(admin);
  if (!allowed.ok) return allowed;
  if (input.reason.trim() === "") {
    return fail(finding("OPERATOR_REASON_MISSING", "give a reason", { field: "reason" }));
  }
  const target = await activeOperator(tx, admin.tenantId, input.operatorId);
  if (!target.ok) return target;
  if (await needsSecondAdmin(tx, admin.tenantId)) {
    return proposeGrant(tx, admin, {
      subjectKind: "operator", subjectId: input.operatorId, decision: "rotate_secret",
      reason: input.reason.trim(),
    });
  }
  const rotated = await rotateOperatorSecret(tx, admin.tenantId, input.operatorId);
  if (!rotated.ok) return rotated;
  const { name, secret } = rotated.value;
  return ok({ kind: "secret_rotated", operatorName: name, secret });
}

async function addWebhookNow(
  tx: Tx, tenantId: string, request: WebhookRequest, keys: () => WebhookSecretKeys,
): Promise<Result<AccessGrant, Finding>> {
  const max = limits.outbox.webhookEndpointsPerTenantMax;
  if ((await countWebhookEndpoints(tx, tenantId)) >= max) {
    const detail = `the tenant has ${max} endpoints`;
    return fail(finding("WEBHOOK_ENDPOINTS_FULL", detail, { field: "url" }));
  }
  const signingSecret = newSigningSecret();
  const endpoint = await addWebhookEndpoint(
    tx, tenantId, request.url, request.eventTypes, signingSecret, keys(),
  );
  return ok({ kind: "webhook_added", endpoint, signingSecret });
}

/** An admin's new webhook endpoint: now, or proposed under four eyes. */
export async function addWebhookAsAdmin(
  tx: Tx, admin: Operator, request: WebhookRequest & { reason: string },
  keys: () => WebhookSecretKeys,
): Promise<Result<AccessOutcome, Finding>> {
  const allowed = refuseUnlessAdmin(admin);
  if (!allowed.ok) return allowed;
  if (await needsSecondAdmin(tx, admin.tenantId)) {
    return proposeGrant(tx, admin, {
      subjectKind: "webhook_endpoint", subjectId: request.url, decision: "add",
      reason: request.reason.trim() || "new webhook endpoint",
      detail: { event_types: request.eventTypes },
    });
  }
  return addWebhookNow(tx, admin.tenantId, request, keys);
}

/**
 * The second admin's approval of an access grant: the grant happens and the proposal closes, in
 * one transaction. The proposer, and anyone not an admin, is refused.
 */
export async function approveAccessProposal(
  tx: Tx, approver: Operator, proposalId: string, keys: () => WebhookSecretKeys,
): Promise<Result<AccessGrant, Finding>> {
  const open = await openProposalFor(tx, approver, proposalId);
  if (!open.ok) return open;
  const proposal = open.value;
  if (approver.role !== "admin") {
    const detail = `${approver.name} is a ${approver.role}; ${proposalId} grants access ` +
      "and needs another admin";
    return fail(finding("FOUR_EYES_APPROVER_NOT_ADMIN", detail, { field: "proposal_id" }));
  }
  if (proposal.proposer_id === approver.operatorId) {
    const detail = `${approver.name} proposed ${proposalId} and cannot approve it; ` +
      "another admin must";
    return fail(finding("FOUR_EYES_SELF_APPROVAL", detail, { field: "proposal_id" }));
  }
  const granted = proposal.subject_kind === "operator"
    ? await rotateOperatorSecret(tx, approver.tenantId, proposal.subject_id).then((r) => r.ok
      ? ok<AccessGrant>({
        kind: "secret_rotated", operatorName: r.value.name, secret: r.value.secret,
      })
      : r)
    : await addWebhookNow(tx, approver.tenantId, {
      url: proposal.subject_id, eventTypes: proposal.detail?.event_types ?? [],
    }, keys);
  if (!granted.ok) return granted;
  await markApproved(tx, approver, proposalId);
  return granted;
}

export type ConsoleApproval =
  | { kind: "access"; grant: AccessGrant } | { kind: "decision"; approved: ApprovedDecision };

/** The console's approval of any proposal: an access grant here, a money decision by four-eyes. */
export async function approveInConsole(
  tx: Tx, approver: Operator, proposalId: string, keys: () => WebhookSecretKeys,
): Promise<Result<ConsoleApproval, Finding>> {
  const stored = await proposalOf(tx, approver.tenantId, proposalId);
  if (stored && isAccessProposal(stored)) {
    const granted = await approveAccessProposal(tx, approver, proposalId, keys);
    return granted.ok ? ok({ kind: "access", grant: granted.value }) : granted;
  }
  const approved = await approveProposal(tx, approver, proposalId);
  return approved.ok ? ok({ kind: "decision", approved: approved.value }) : approved;
}
