import type { Command } from "commander";
import { limits } from "../../config/limits.ts";
import type { Queryable } from "../../db/pool.ts";
import { findPartner, type Partner } from "../../partners/partners.ts";
import { cutReturnFile } from "../../files/return-cut.ts";
import { listPendingReturns } from "../../partners/returns/return-store.ts";
import { tenantOrExit, withDatabase } from "../context.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";

async function partnerOrExit(db: Queryable, tenant: string, partner: string): Promise<Partner> {
  const { tenantId } = await tenantOrExit(db, tenant);
  const found = await findPartner(db, tenantId, partner);
  if (!found) throw new CliError(`PARTNER_NOT_FOUND: no partner ${partner} in tenant ${tenant}`, exitCodes.usage);
  return found;
}

function cutoffOf(text: string | undefined): Date {
  if (text === undefined) return new Date();
  const cutoff = new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || Number.isNaN(cutoff.getTime())) throw new CliError(`--cutoff ${JSON.stringify(text)} is not an ISO 8601 date and time`, exitCodes.usage);
  return cutoff;
}

/** `clearline partner returns list|cut`: ACH entries refused and waiting to go back, and the cut that sends them (docs/decisions/0025). */
export function registerPartnerReturnsCommands(partner: Command): void {
  const returns = partner.command("returns").description("ACH entries refused at posting, returned to the partner in a return file per cut-off");
  returns
    .command("list")
    .description("the partner's returns not yet in a return file, oldest first")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .requiredOption("--partner <partner>", "partner name or id")
    .option("--json", "machine-readable output")
    .action(async (options: { tenant: string; partner: string; json?: boolean }) => {
      const pending = await withDatabase(async (db) => {
        const found = await partnerOrExit(db.pool, options.tenant, options.partner);
        return listPendingReturns(db.pool, found.tenantId, found.partnerId, limits.partners.listRowsMax);
      });
      if (options.json) printJson(pending.map((p) => ({ natural_key: p.naturalKey, file_id: p.fileId, line: p.line, reason_code: p.reasonCode, recorded_at: p.createdAt.toISOString() })));
      else for (const p of pending) printLine(`${p.reasonCode}\t${p.fileId} line ${p.line}\t${p.naturalKey}`);
    });
  returns
    .command("cut")
    .description("put the partner's returns recorded up to the cut-off into one NACHA return file, sent through the outbox")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .requiredOption("--partner <partner>", "partner name or id")
    .option("--cutoff <time>", "ISO 8601 cut-off time (default: now); the same cut-off names the same file")
    .option("--json", "machine-readable output")
    .action(async (options: { tenant: string; partner: string; cutoff?: string; json?: boolean }) => {
      const cutoff = cutoffOf(options.cutoff);
      const result = await withDatabase(async (db) => {
        const found = await partnerOrExit(db.pool, options.tenant, options.partner);
        return cutReturnFile(db.pool, found.tenantId, found.partnerId, cutoff);
      });
      if (options.json) printJson({ cutoff: cutoff.toISOString(), ...result });
      else if (result.kind === "cut") printLine(`${result.fileName}: ${result.entries} returns (key ${result.fileKey})${result.notSent ? `; ${result.notSent}` : ""}`);
      else if (result.kind === "exists") printLine(`a return file for this cut-off exists already (key ${result.fileKey}); nothing cut`);
      else printLine("no returns pending up to the cut-off");
    });
}
