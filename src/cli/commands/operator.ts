import type { Command } from "commander";
import { createOperator, setFourEyesAboveMinor } from "../../operators/operators.ts";
import { tenantOrExit, withDatabase } from "../context.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";

export function registerOperatorCommands(program: Command): void {
  const operator = program.command("operator").description("operators of the console and operations API, and four eyes");
  operator
    .command("add <name>")
    .description("create an operator; prints the sign-in secret once (only a scrypt hash is stored)")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .requiredOption("--role <role>", "viewer | approver | admin")
    .option("--json", "machine-readable output")
    .action(async (name: string, options: { tenant: string; role: string; json?: boolean }) => {
      const created = await withDatabase(async (db) => createOperator(db.pool, { tenantId: (await tenantOrExit(db.pool, options.tenant)).tenantId, name, role: options.role }));
      if (!created.ok) throw new CliError(`${created.error.code}: ${created.error.message}`, exitCodes.usage);
      const { operatorId, tenantId, role, secret } = created.value;
      if (options.json) printJson({ operator_id: operatorId, tenant_id: tenantId, name, role, secret });
      else {
        printLine(`operator ${name} (${role}) of ${tenantId}: ${operatorId}`);
        printLine(`secret (shown once, store it now): ${secret}`);
      }
    });
  operator
    .command("four-eyes")
    .description("decisions on amounts above this many minor units need a second approver")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .requiredOption("--above <amountMinor>", "minor units, e.g. 10000 for 100.00 USD")
    .option("--json", "machine-readable output")
    .action(async (options: { tenant: string; above: string; json?: boolean }) => {
      if (!/^\d{1,18}$/.test(options.above)) throw new CliError("FOUR_EYES_AMOUNT_INVALID: --above is a whole number of minor units", exitCodes.usage);
      const tenantId = await withDatabase(async (db) => {
        const tenant = await tenantOrExit(db.pool, options.tenant);
        await setFourEyesAboveMinor(db.pool, tenant.tenantId, BigInt(options.above));
        return tenant.tenantId;
      });
      if (options.json) printJson({ tenant_id: tenantId, above_amount_minor: options.above });
      else printLine(`four eyes for ${tenantId}: decisions above ${options.above} minor units need a second approver`);
    });
}
