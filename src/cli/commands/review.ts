import type { Command } from "commander";
import { decideReview, listReviews, listSuspensePostings, type Decision } from "../../ingest/review.ts";
import { withDatabase } from "../context.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";
import { tenantOrExit } from "../context.ts";

export function registerReviewCommands(program: Command): void {
  const review = program.command("review").description("conflicts and suspects held for a person; records posted to suspense");
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
        return { items: await listReviews(db.pool, { ...scope, state: options.all ? "all" : "open" }), suspense: await listSuspensePostings(db.pool, scope) };
      });
      if (options.json) return printJson(listed);
      for (const item of listed.items) {
        printLine(`${item.review_id}  ${item.reason.padEnd(8)} ${item.state.padEnd(8)} ${item.kind} ${item.amount_minor} ${item.currency}  ${item.natural_key}  file ${item.file_id} ${item.position ?? `#${item.record_index}`}${item.matched_ref ? `  matches ${item.matched_ref}` : ""}${item.decision_reason ? `  reason: ${item.decision_reason}` : ""}`);
      }
      if (listed.suspense.length > 0) printLine(`posted to suspense (counterparty unresolved): ${listed.suspense.length}`);
      for (const s of listed.suspense) printLine(`  ${s.file_id} ${s.position}  ${s.amount_minor} ${s.currency}  ${s.natural_key}  ${s.detail}`);
    });
  for (const [verb, decision] of [["release", "released"], ["refuse", "refused"]] as const) {
    review
      .command(`${verb} <id>`)
      .description(verb === "release" ? "post a held record (key derived from the record), recording who decided why" : "refuse a held record for good, with a reason")
      .requiredOption("--reason <reason>", "why: kept with the decision")
      .option("--tenant <tenant>", "tenant name or id")
      .option("--json", "machine-readable output")
      .action(async (id: string, options: { reason: string; tenant?: string; json?: boolean }) => {
        const decided = await withDatabase(async (db) => {
          const tenantId = options.tenant === undefined ? undefined : (await tenantOrExit(db.pool, options.tenant)).tenantId;
          return decideReview(db.pool, tenantId, id, decision as Decision, options.reason);
        });
        if (!decided.ok) throw new CliError(`${decided.error.code}: ${decided.error.message}`, exitCodes.usage);
        if (options.json) printJson(decided.value);
        else printLine(`${id}: ${decided.value.state}${decided.value.transfer_key ? ` (posted ${decided.value.transfer_key})` : ""}`);
      });
  }
}
