import { userInfo } from "node:os";
import type { Command } from "commander";
import {
  countCompensations, listReviews, listSuspensePostings, type DecidedReview,
  type ReviewDecisionKind,
} from "../../records/index.ts";
import { withTransaction } from "../../db/transaction.ts";
import { decideByNamedOperator, type Proposal } from "../../operators/four-eyes.ts";
import { withDatabase } from "../context.ts";
import { withOperatorSecret } from "../operator-secret.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { moneyText, printJson, printLine } from "../output.ts";
import { tenantOrExit } from "../context.ts";

/** The three decisions (docs/decisions/0011): verb, decision, what it does to the ledger. */
const decisionCommands: Array<[verb: string, decision: ReviewDecisionKind, description: string]> = [
  ["replace", "replace", "the held record corrects the original: the original posting is compensated (<key>:compensate) and the record posted under <natural key>:replace:<review id>"],
  ["apply-as-new", "apply_as_new", "the held record is a separate payment reusing the key: posted under <natural key>:new:<review id>; the original stays"],
  ["refuse", "refuse", "nothing is posted; the decision is recorded"],
];

/** The operator's name when --operator is not given: the OS user running the command. */
function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? process.env.LOGNAME ?? "";
  }
}

/** A proposal's line: nothing posted; who proposed it, by which path, and where it is approved. */
export function proposalLine(proposal: Proposal): string {
  return `${proposal.proposal_id}: ${proposal.decision} of ${proposal.subject_id} proposed by ${proposal.proposed_by} (${proposal.proposed_via}), above the tenant's four-eyes amount: nothing posted; another approver approves it in the console (or POST /v1/ops/proposals/${proposal.proposal_id}/approval)`;
}

/** One line per decision, saying what it did to the ledger. */
export function decisionLine(decided: DecidedReview): string {
  const who = `${decided.review_id}: ${decided.state.replace(/_/g, " ")} by ${decided.operator}`;
  if (decided.decision === "replace") {
    return `${who}: ${decided.original_transfer_key} compensated by ${decided.compensation_key}; ${decided.posting_key ? `corrected record posted as ${decided.posting_key}` : "no corrected posting (zero amount)"}`;
  }
  if (decided.decision === "apply_as_new") return `${who}: ${decided.posting_key ? `posted as ${decided.posting_key}` : "nothing to post"}`;
  return `${who}: nothing posted`;
}

export function registerReviewCommands(program: Command): void {
  const review = program.command("review").description("conflicts and suspects held for a person: replace, apply-as-new or refuse; records posted to suspense");
  review
    .command("list")
    .description("open review items (conflicts, suspects), then records posted to a partner's suspense account")
    .option("--tenant <tenant>", "tenant name or id (default: every tenant)")
    .option("--all", "decided items too")
    .option("--json", "machine-readable output")
    .action(async (options: { tenant?: string; all?: boolean; json?: boolean }) => {
      const listed = await withDatabase(async (db) => {
        const tenantId = options.tenant === undefined ? undefined : (await tenantOrExit(db.pool, options.tenant)).tenantId;
        const scope = tenantId === undefined ? {} : { tenantId };
        return { reviews: await listReviews(db.pool, { ...scope, state: options.all ? "all" : "open" }), suspense: await listSuspensePostings(db.pool, scope) };
      });
      if (options.json) return printJson(listed);
      for (const item of listed.reviews) {
        printLine(`${item.review_id}  ${item.reason.padEnd(8)} ${item.state.padEnd(8)} ${item.kind} ${moneyText(item.amount_minor, item.currency)}  ${item.natural_key}  file ${item.file_id} ${item.position ?? `#${item.record_index}`}${item.matched_ref ? `  matches ${item.matched_ref}` : ""}${item.matched_file ? `  other file ${item.matched_file.name}${item.matched_file.created ? ` created ${item.matched_file.created}` : ""}` : ""}${item.decision_reason ? `  reason: ${item.decision_reason}` : ""}${item.operator ? ` (${item.operator})` : ""}`);
      }
      if (listed.suspense.length > 0) printLine(`posted to suspense (counterparty unresolved): ${listed.suspense.length}`);
      for (const s of listed.suspense) printLine(`  ${s.file_id} ${s.position}  ${moneyText(s.amount_minor, s.currency)}  ${s.natural_key}  ${s.detail}`);
    });
  for (const [verb, decision, description] of decisionCommands) {
    review
      .command(`${verb} <id>`)
      .description(description)
      .requiredOption("--reason <reason>", "why: kept with the decision")
      .option("--operator <name>", "who decides (default: the OS user, a name only); above the tenant's four-eyes amount required: the approver who proposes it, with their secret (CLEARLINE_OPERATOR_SECRET or the prompt)")
      .option("--tenant <tenant>", "tenant name or id")
      .option("--json", "machine-readable output")
      .action(async (id: string, options: { reason: string; operator?: string; tenant?: string; json?: boolean }) => {
        const decided = await withDatabase(async (db) => {
          const tenantId = options.tenant === undefined ? undefined : (await tenantOrExit(db.pool, options.tenant)).tenantId;
          // Above the four-eyes amount: a proposal by the operator --operator names, with their
          // secret (docs/decisions/0035, 0066); at or below it, decided at once as before.
          return withOperatorSecret(options.operator, (operatorSecret) => withTransaction(db.pool, (tx) => decideByNamedOperator(tx, {
            ...(tenantId ? { tenantId } : {}), reviewId: id, decision, reason: options.reason,
            operatorName: options.operator, operatorSecret, fallbackName: osUser(), via: "cli",
          })));
        });
        if (!decided.ok) throw new CliError(`${decided.error.code}: ${decided.error.message}`, exitCodes.usage);
        if (decided.value.kind === "proposed") {
          if (options.json) printJson({ proposal: decided.value.proposal });
          else printLine(proposalLine(decided.value.proposal));
          return;
        }
        countCompensations(decided.value.outcome);
        if (options.json) printJson(decided.value.outcome.decided);
        else printLine(decisionLine(decided.value.outcome.decided));
      });
  }
  review
    .command("release <id>")
    .description("gone: decide with review replace, review apply-as-new or review refuse")
    .allowUnknownOption()
    .option("--reason <reason>", "ignored")
    .action(() => {
      throw new CliError("REVIEW_RELEASE_REMOVED: review release is gone: decide with "
        + "`review replace ID` (the record corrects the original), `review apply-as-new ID` "
        + "(a separate payment) or `review refuse ID` (nothing posted), each with --reason",
      exitCodes.usage);
    });
}
