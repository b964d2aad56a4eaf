import type { Command } from "commander";
import { limits } from "../../config/limits.ts";
import { withTransaction } from "../../db/transaction.ts";
import { approvedDecisionView, approveProposal, cancelProposal, listProposals, type ApprovedDecision, type Proposal } from "../../operators/four-eyes.ts";
import { proposerNamed } from "../../operators/proposals.ts";
import { countCompensations } from "../../records/index.ts";
import { tenantOrExit, withDatabase } from "../context.ts";
import { withOperatorSecret } from "../operator-secret.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { moneyText, printJson, printLine } from "../output.ts";
import { decisionLine } from "./review.ts";

/**
 * Proposals from the command line (docs/decisions/0035): the decisions above a tenant's four-eyes
 * amount wait for a second approver. As with `review replace`, the CLI names its operator with
 * --operator (an approver or admin of the tenant), who proves it with their secret, as a sign-in
 * does (docs/decisions/0066); the proposal and its approval record the path they came by. The
 * database refuses an approval by the proposer.
 */
function proposalRow(p: Proposal): string {
  const decided = p.state === "approved" ? `  approved by ${p.approved_by ?? "?"}` : p.state === "cancelled" ? `  cancelled by ${p.cancelled_by ?? "?"} (${p.cancel_reason ?? ""})` : "";
  return `${p.proposal_id}  ${p.state.padEnd(9)} ${p.decision} of ${p.subject_kind} ${p.subject_id}  ${moneyText(p.amount_minor, p.currency)}  proposed by ${p.proposed_by} (${p.proposed_via}): ${p.reason}${decided}`;
}

function approvedLine(proposalId: string, approved: ApprovedDecision): string {
  if (approved.kind === "review") return `${proposalId} approved: ${decisionLine(approved.outcome.decided)}`;
  if (approved.kind === "suspense_move") return `${proposalId} approved: suspense posting ${approved.move.posting_key} moved to ${approved.move.target_account} as ${approved.move.move_key}`;
  return `${proposalId} approved: difference ${approved.difference.differenceId} ${approved.difference.state}${approved.difference.correctionKey ? `, correction ${approved.difference.correctionKey}` : ""}`;
}

export function registerProposalCommands(program: Command): void {
  const proposal = program.command("proposal").description("decisions above the four-eyes amount, waiting for a second approver");
  proposal
    .command("list")
    .description("the tenant's proposals, open and decided, oldest first")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .option("--json", "machine-readable output")
    .action(async (options: { tenant: string; json?: boolean }) => {
      const proposals = await withDatabase(async (db) => listProposals(db.pool, (await tenantOrExit(db.pool, options.tenant)).tenantId, limits.ingest.listRowsMax));
      if (options.json) return printJson({ proposals });
      for (const p of proposals) printLine(proposalRow(p));
    });
  proposal
    .command("approve <id>")
    .description("run the proposed decision (its ledger meaning is the decision's own) and close the proposal; never by its proposer")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .requiredOption("--operator <name>", "the approver: an approver or admin of the tenant who did not propose it, with their secret (CLEARLINE_OPERATOR_SECRET or the prompt)")
    .option("--json", "machine-readable output")
    .action(async (id: string, options: { tenant: string; operator: string; json?: boolean }) => {
      const approved = await withDatabase(async (db) => {
        const tenantId = (await tenantOrExit(db.pool, options.tenant)).tenantId;
        return withOperatorSecret(options.operator, async (secret) => {
          const approver = await proposerNamed(db.pool, tenantId, options.operator, "cli", secret);
          if (!approver.ok) return approver;
          return withTransaction(db.pool, (tx) => approveProposal(tx, approver.value, id));
        });
      });
      if (!approved.ok) throw new CliError(`${approved.error.code}: ${approved.error.message}`, exitCodes.usage);
      if (approved.value.kind === "review") countCompensations(approved.value.outcome);
      if (options.json) printJson(approvedDecisionView(approved.value));
      else printLine(approvedLine(id, approved.value));
    });
  proposal
    .command("cancel <id>")
    .description("close an open proposal with a reason: nothing moves")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .requiredOption("--operator <name>", "who cancels: its proposer withdrawing it, or another approver declining it, with their secret (CLEARLINE_OPERATOR_SECRET or the prompt)")
    .requiredOption("--reason <reason>", "why: kept with the proposal")
    .option("--json", "machine-readable output")
    .action(async (id: string, options: { tenant: string; operator: string; reason: string; json?: boolean }) => {
      const cancelled = await withDatabase(async (db) => {
        const tenantId = (await tenantOrExit(db.pool, options.tenant)).tenantId;
        return withOperatorSecret(options.operator, async (secret) => {
          const operator = await proposerNamed(db.pool, tenantId, options.operator, "cli", secret);
          if (!operator.ok) return operator;
          return withTransaction(db.pool, (tx) => cancelProposal(tx, operator.value, id, options.reason));
        });
      });
      if (!cancelled.ok) throw new CliError(`${cancelled.error.code}: ${cancelled.error.message}`, exitCodes.usage);
      if (options.json) printJson({ proposal: cancelled.value });
      else printLine(proposalRow(cancelled.value));
    });
}
