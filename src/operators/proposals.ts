import { createHash } from "node:crypto";
import type { Queryable } from "../db/pool.ts";
import { sqlState, type Tx } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import type { ReviewDecisionKind } from "../records/index.ts";
import { isOperatorRole, type Operator } from "./operators.ts";
import { secretMatches } from "./secret.ts";

/**
 * Proposals: decisions above the tenant's four-eyes amount, waiting for a second approver
 * (docs/decisions/0026, 0035). A proposal moves no money; only its approval runs the decision, and
 * a cancellation closes it with nothing moved. The database keeps the proposer from approving
 * (CHECK approved_by <> proposed_by) and keeps one open proposal per subject (a partial unique
 * index).
 */
export type ProposalSubject =
  | "review" | "suspense_move" | "recon_difference"
  // access grants (docs/decisions/0106): an operator's new secret, a new webhook endpoint
  | "operator" | "webhook_endpoint";
export type ProposalPath = "console" | "api_key" | "cli";

/**
 * Who a machine path says decides: a name, and through the CLI the secret that proves it (0066).
 */
export type NamedOperator =
  | { via: "api_key"; operatorName: string | undefined }
  | { via: "cli"; operatorName: string | undefined; operatorSecret: string | undefined };

export interface Proposal {
  proposal_id: string;
  tenant_id: string;
  subject_kind: ProposalSubject;
  // the review id, the suspense posting's transfer key, or the difference id
  subject_id: string;
  decision: ReviewDecisionKind | "move" | "correct" | "rotate_secret" | "add";
  target_account: string | null;
  // an access grant's parameters (a webhook endpoint's event types); null for money decisions
  detail: { event_types?: string[] } | null;
  reason: string;
  amount_minor: string;
  currency: string;
  proposed_by: string;
  proposed_via: ProposalPath;
  state: "open" | "approved" | "cancelled";
  approved_by: string | null;
  cancelled_by: string | null;
  cancel_reason: string | null;
}

export interface ProposalInput {
  subjectKind: ProposalSubject;
  subjectId: string;
  decision: Proposal["decision"];
  reason: string;
  amountMinor: string;
  currency: string;
  targetAccount: string | null;
  detail?: { event_types?: string[] };
}

export type StoredProposal = Proposal & { proposer_id: string };

/** Who decided, as the subject's decision records it (one text column since decision 0011). */
export function decidedBy(proposer: string, approver?: string): string {
  return approver ? `${proposer} approved by ${approver}` : proposer;
}

/**
 * Records a proposal. Its id names the subject, the decision, the proposer and how many proposals
 * the subject had before (after a cancel, the same decision may be proposed again): never random.
 * The same proposer proposing the same decision again while it is open gets that proposal back (a
 * repeat); anything else proposed on a subject with an open proposal is refused.
 */
export async function propose(
  tx: Tx, proposer: Operator, input: ProposalInput, via: ProposalPath,
): Promise<Result<Proposal, Finding>> {
  const pending = await openProposalOn(tx, proposer.tenantId, input);
  if (pending) {
    const repeat =
      pending.proposed_by === proposer.operatorId && pending.decision === input.decision &&
      pending.target_account === input.targetAccount;
    const stored = repeat
      ? await proposalOf(tx, proposer.tenantId, pending.proposal_id)
      : undefined;
    if (stored) return ok(shown(stored));
    return fail(
      finding(
        "PROPOSAL_OPEN",
        `${input.subjectId} has an open proposal (${pending.proposal_id}) waiting for a second ` +
        `approver: approve or cancel it`,
        { field: "id" },
      ),
    );
  }
  const proposalId = await nextProposalId(tx, proposer, input);
  try {
    await tx.query("SAVEPOINT propose");
    await tx.query(
      `INSERT INTO decision_proposal ( tenant_id, proposal_id, subject_kind, subject_id, decision,
         target_account, reason, amount_minor, currency, proposed_by, proposed_via, detail)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        proposer.tenantId, proposalId, input.subjectKind, input.subjectId, input.decision,
        input.targetAccount, input.reason, input.amountMinor, input.currency, proposer.operatorId,
        via, input.detail === undefined ? null : JSON.stringify(input.detail),
      ],
    );
    await tx.query("RELEASE SAVEPOINT propose");
  } catch (error) {
    if (sqlState(error) !== "23505") throw error;
    await tx.query("ROLLBACK TO SAVEPOINT propose");
    return fail(
      finding(
        "PROPOSAL_OPEN",
        `${input.subjectId} has an open proposal waiting for a second approver: approve or ` +
        `cancel it`,
        { field: "id" },
      ),
    );
  }
  const proposal = await proposalOf(tx, proposer.tenantId, proposalId);
  if (!proposal) throw new Error(`proposal ${proposalId} vanished inside its own transaction`);
  return ok(shown(proposal));
}

interface OpenProposal {
  proposal_id: string;
  proposed_by: string;
  decision: string;
  target_account: string | null;
}

/** The subject's open proposal, if it has one (at most one: a unique index holds it). */
async function openProposalOn(
  tx: Tx, tenantId: string, input: ProposalInput,
): Promise<OpenProposal | undefined> {
  const { rows } = await tx.query<OpenProposal>(
    `SELECT proposal_id, proposed_by, decision, target_account
     FROM decision_proposal
     WHERE tenant_id = $1 AND subject_kind = $2 AND subject_id = $3 AND state = 'open'`,
    [tenantId, input.subjectKind, input.subjectId],
  );
  return rows[0];
}

/**
 * A proposal's id from the subject, the decision, the proposer and how many proposals the subject
 * had before it.
 */
async function nextProposalId(tx: Tx, proposer: Operator, input: ProposalInput): Promise<string> {
  const { rows } = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n
       FROM decision_proposal
      WHERE tenant_id = $1 AND subject_kind = $2 AND subject_id = $3`,
    [proposer.tenantId, input.subjectKind, input.subjectId],
  );
  const earlier = rows[0]?.n ?? 0;
  const parts = [
    proposer.tenantId, input.subjectKind, input.subjectId, input.decision,
    input.targetAccount ?? "", proposer.operatorId, ...(earlier > 0 ? [String(earlier)] : []),
  ];
  const digest = createHash("sha256").update(parts.join("\u0000")).digest("hex");
  return `prop_${digest.slice(0, 24)}`;
}

/** Refuses a direct decision on a subject that has an open proposal: approve or cancel it first. */
export async function refuseWhileProposed(
  db: Queryable, tenantId: string, subjectKind: ProposalSubject, subjectId: string,
): Promise<Result<true, Finding>> {
  const { rows } = await db.query<{ proposal_id: string }>(
    `SELECT proposal_id
     FROM decision_proposal
     WHERE tenant_id = $1 AND subject_kind = $2 AND subject_id = $3 AND state = 'open'`,
    [tenantId, subjectKind, subjectId],
  );
  const open = rows[0];
  if (!open) return ok(true);
  return fail(
    finding(
      "PROPOSAL_OPEN",
      `${subjectId} has an open proposal (${open.proposal_id}) waiting for a second approver: ` +
      `approve or cancel it first`,
      { field: "id" },
    ),
  );
}

const SELECT_PROPOSAL = `SELECT p.proposal_id, p.tenant_id, p.subject_kind, p.subject_id,
                           p.decision, p.target_account, p.detail, p.reason,
                           p.amount_minor::text,
                           p.currency, p.state, p.proposed_via, proposer.name AS proposed_by,
                           approver.name AS approved_by, canceller.name AS cancelled_by,
                           p.cancel_reason, p.proposed_by AS proposer_id
                         FROM decision_proposal p
                         JOIN operator proposer ON proposer.operator_id = p.proposed_by
                         LEFT JOIN operator approver ON approver.operator_id = p.approved_by
                         LEFT JOIN operator canceller ON canceller.operator_id = p.cancelled_by`;

export async function proposalOf(
  db: Queryable, tenantId: string, proposalId: string, forUpdate = false,
): Promise<StoredProposal | undefined> {
  const { rows } = await db.query<StoredProposal>(
    `${SELECT_PROPOSAL}
     WHERE p.tenant_id = $1 AND p.proposal_id = $2${forUpdate ? " FOR UPDATE OF p" : ""}`,
    [tenantId, proposalId],
  );
  return rows[0];
}

function shown(proposal: StoredProposal): Proposal {
  const { proposer_id: _hidden, ...rest } = proposal;
  return rest;
}

export async function listProposals(
  db: Queryable, tenantId: string, rowsMax: number,
): Promise<Proposal[]> {
  const { rows } = await db.query<StoredProposal>(
    `${SELECT_PROPOSAL} WHERE p.tenant_id = $1 ORDER BY p.proposed_at, p.proposal_id LIMIT $2`,
    [tenantId, rowsMax],
  );
  return rows.map(shown);
}

/** The open proposal, locked, that `operator` may act on; else why not. */
export async function openProposalFor(
  tx: Tx, operator: Operator, proposalId: string,
): Promise<Result<StoredProposal, Finding>> {
  const proposal = await proposalOf(tx, operator.tenantId, proposalId, true);
  if (!proposal) {
    return fail(
      finding("PROPOSAL_NOT_FOUND", `no proposal ${proposalId}`, { field: "proposal_id" }),
    );
  }
  if (proposal.state !== "open") {
    const by = proposal.approved_by ?? proposal.cancelled_by;
    return fail(
      finding(
        "PROPOSAL_DECIDED", `proposal ${proposalId} is ${proposal.state}${by ? ` by ${by}` : ""}`,
        { field: "proposal_id" },
      ),
    );
  }
  return ok(proposal);
}

export async function markApproved(tx: Tx, approver: Operator, proposalId: string): Promise<void> {
  await tx.query(
    `UPDATE decision_proposal
     SET state = 'approved', approved_by = $3, approved_at = now()
     WHERE tenant_id = $1 AND proposal_id = $2 AND state = 'open'`,
    [approver.tenantId, proposalId, approver.operatorId],
  );
}

/**
 * Cancels an open proposal, with a reason: its proposer withdrawing it, or another approver
 * declining it. Nothing moves; the subject is as it was before the proposal (docs/decisions/0035).
 */
export async function cancelProposal(
  tx: Tx, operator: Operator, proposalId: string, reason: string,
): Promise<Result<Proposal, Finding>> {
  const open = await openProposalFor(tx, operator, proposalId);
  if (!open.ok) return open;
  await tx.query(
    `UPDATE decision_proposal
     SET state = 'cancelled', cancelled_by = $3, cancelled_at = now(), cancel_reason = $4
     WHERE tenant_id = $1 AND proposal_id = $2`,
    [operator.tenantId, proposalId, operator.operatorId, reason],
  );
  const cancelled = await proposalOf(tx, operator.tenantId, proposalId);
  if (!cancelled) throw new Error(`proposal ${proposalId} vanished inside its own transaction`);
  return ok(shown(cancelled));
}

/**
 * The operator a machine path names (the API key's `operator`, the CLI's --operator) to propose,
 * approve or cancel: an operator of the tenant who may decide (approver or admin). Through the API
 * key the name is not a sign-in; the proposal records the path it came by so the approver sees it
 * (docs/decisions/0035). Through the CLI the operator's secret is checked as a sign-in checks it
 * (docs/decisions/0066): without it, or with another, nothing is done.
 */
export async function proposerNamed(
  db: Queryable, tenantId: string, name: string | undefined, via: Exclude<ProposalPath, "console">,
  secret?: string,
): Promise<Result<Operator, Finding>> {
  const flag = via === "cli" ? "--operator NAME" : "the operator field";
  if (name === undefined || name.trim() === "") {
    return fail(
      finding(
        "FOUR_EYES_PROPOSER_REQUIRED",
        `above the tenant's four-eyes amount this decision is a proposal, and a proposal names ` +
        `its proposer: give ${flag}, an approver of the tenant`,
        { field: "operator" },
      ),
    );
  }
  const { rows } = await db.query<{
    operator_id: string;
    tenant_id: string;
    name: string;
    role: string;
    secret_hash: string;
  }>(
    `SELECT operator_id, tenant_id, name, role, secret_hash
     FROM operator
     WHERE tenant_id = $1 AND name = $2`,
    [tenantId, name.trim()],
  );
  const row = rows[0];
  if (!row || !isOperatorRole(row.role) || row.role === "viewer") {
    return fail(
      finding(
        "FOUR_EYES_PROPOSER_UNKNOWN",
        `${name.trim()} is ${row ? "a viewer" : "no operator of the tenant"}: above the ` +
        `four-eyes amount the decision is proposed by an approver named with ${flag} (clearline ` +
        `operator add)`,
        { field: "operator" },
      ),
    );
  }
  if (via === "cli") {
    if (secret === undefined || secret === "") {
      return fail(
        finding(
          "OPERATOR_SECRET_REQUIRED",
          `above the four-eyes amount the CLI acts as ${row.name} only with ${row.name}'s ` +
          `secret: set CLEARLINE_OPERATOR_SECRET or run it on a terminal to be asked (never as ` +
          `an argument)`,
          { field: "operator" },
        ),
      );
    }
    if (!(await secretMatches(secret, row.secret_hash))) {
      return fail(
        finding(
          "OPERATOR_SIGN_IN_FAILED", `the secret given is not ${row.name}'s: nothing was done`,
          { field: "operator" },
        ),
      );
    }
  }
  return ok({
    operatorId: row.operator_id, tenantId: row.tenant_id, name: row.name, role: row.role,
  });
}
