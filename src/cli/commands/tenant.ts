import type { Command } from "commander";
import { createTenant } from "../../tenants/tenants.ts";
import { withDatabase } from "../context.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";

export function registerTenantCommands(program: Command): void {
  const tenant = program.command("tenant").description("tenants and their API keys");
  tenant
    .command("add <name>")
    .description("create a tenant; prints its API key once (only a hash is stored)")
    .option("--json", "machine-readable output")
    .action(async (name: string, options: { json?: boolean }) => {
      const created = await withDatabase((db) => createTenant(db.pool, name));
      if (!created.ok) throw new CliError(created.error.message, exitCodes.usage);
      if (options.json) printJson({ tenant_id: created.value.tenantId, name: created.value.name, api_key: created.value.apiKey });
      else {
        printLine(`tenant ${created.value.name}: ${created.value.tenantId}`);
        printLine(`api key (shown once, store it now): ${created.value.apiKey}`);
      }
    });
}
