import type { Command } from "commander";
import { migrate } from "../../db/migrate.ts";
import { withDatabase } from "../context.ts";
import { printJson, printLine } from "../output.ts";

export function registerMigrateCommand(program: Command): void {
  program
    .command("migrate")
    .description("apply pending SQL migrations (each once, in order, checksum-guarded)")
    .option("--json", "machine-readable output")
    .action(async (options: { json?: boolean }) => {
      const report = await withDatabase((db) => migrate(db.pool), { migrate: false });
      if (options.json) printJson(report);
      else printLine(report.applied.length > 0 ? `applied: ${report.applied.join(", ")}` : `up to date (${report.alreadyApplied} migrations applied earlier)`);
    });
}
