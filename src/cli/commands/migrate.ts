import type { Command } from "commander";
import { limits } from "../../config/limits.ts";
import { migrate } from "../../db/migrate.ts";
import { loadWebhookSecretKeys } from "../../outbox/webhooks/secret-box.ts";
import { sealClearWebhookSecrets } from "../../outbox/webhooks/webhook-store.ts";
import { withDatabase } from "../context.ts";
import { printJson, printLine } from "../output.ts";

export function registerMigrateCommand(program: Command): void {
  program
    .command("migrate")
    .description("apply pending SQL migrations (each once, in order, checksum-guarded), then seal webhook secrets stored in clear")
    .option("--json", "machine-readable output")
    .action(async (options: { json?: boolean }) => {
      const report = await withDatabase(async (db, config) => {
        const migrated = await migrate(db.pool);
        // Secrets stored in clear before migration 0027 (SQL cannot seal them: the key is not in
        // the database); the key file is read only when there is one (docs/decisions/0065).
        const keys = () => loadWebhookSecretKeys({ home: config.home, secretHex: config.webhookSecretKey });
        const sealed = await sealClearWebhookSecrets(db.pool, keys, limits.outbox.webhookSecretsSealedPerStatementMax);
        return { ...migrated, webhookSecretsSealed: sealed };
      }, { migrate: false });
      if (options.json) return printJson(report);
      printLine(report.applied.length > 0 ? `applied: ${report.applied.join(", ")}` : `up to date (${report.alreadyApplied} migrations applied earlier)`);
      if (report.webhookSecretsSealed > 0) {
        printLine(`sealed ${report.webhookSecretsSealed} webhook signing secrets stored in clear`);
      }
    });
}
