import type { Command } from "commander";
import { addAccountAlias, createPartner, listPartners, partnerAccountsOf } from "../../partners/partners.ts";
import { tenantOrExit, withDatabase } from "../context.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";
import { registerPartnerReturnsCommands } from "./partner-returns.ts";

export function registerPartnerCommands(program: Command): void {
  const partner = program.command("partner").description("clearing partners: who sends files, and the accounts their records post against");
  partner
    .command("add <name>")
    .description("create a clearing partner with its settlement and suspense accounts")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .option("--currency <currency>", "currency of the accounts opened now (others open when a file needs them)", "USD")
    .option("--json", "machine-readable output")
    .action(async (name: string, options: { tenant: string; currency: string; json?: boolean }) => {
      const created = await withDatabase(async (db) => {
        const tenant = await tenantOrExit(db.pool, options.tenant);
        return createPartner(db.pool, tenant.tenantId, name, options.currency);
      });
      if (!created.ok) throw new CliError(`${created.error.code}: ${created.error.message}`, exitCodes.usage);
      const accounts = partnerAccountsOf(created.value, created.value.currency);
      if (options.json) printJson({ partner_id: created.value.partnerId, name, currency: created.value.currency, settlement_account: accounts.settlement, suspense_account: accounts.suspense });
      else printLine(`partner ${name}: ${created.value.partnerId} (settlement ${accounts.settlement}, suspense ${accounts.suspense})`);
    });
  partner
    .command("list")
    .description("the tenant's clearing partners")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .option("--json", "machine-readable output")
    .action(async (options: { tenant: string; json?: boolean }) => {
      const partners = await withDatabase(async (db) => listPartners(db.pool, (await tenantOrExit(db.pool, options.tenant)).tenantId));
      if (options.json) printJson(partners.map((p) => ({ partner_id: p.partnerId, name: p.name, currency: p.currency })));
      else for (const p of partners) printLine(`${p.name}\t${p.partnerId}\t${p.currency}`);
    });
  registerPartnerReturnsCommands(partner);

  const alias = program.command("alias").description("counterparty aliases (routing + account, IBAN, other id) -> ledger accounts");
  alias
    .command("add <alias>")
    .description("map aba:<routing>:<account>, iban:<IBAN> or acct:<id> to an existing account")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .requiredOption("--account <account>", "the ledger account the alias names")
    .option("--json", "machine-readable output")
    .action(async (aliasText: string, options: { tenant: string; account: string; json?: boolean }) => {
      const added = await withDatabase(async (db) => addAccountAlias(db.pool, (await tenantOrExit(db.pool, options.tenant)).tenantId, aliasText, options.account));
      if (!added.ok) throw new CliError(`${added.error.code}: ${added.error.message}`, exitCodes.usage);
      if (options.json) printJson({ alias: aliasText, account: options.account, outcome: added.value });
      else printLine(`${aliasText} -> ${options.account} (${added.value})`);
    });
}
