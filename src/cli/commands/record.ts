import type { Command } from "commander";
import type { Queryable } from "../../db/pool.ts";
import {
  recordHistory, tenantsHoldingKey, type HistoryEvent, type RecordHistory,
} from "../../records/index.ts";
import { tenantOrExit, withDatabase } from "../context.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";

async function tenantOfKey(db: Queryable, key: string, tenant: string | undefined): Promise<string> {
  if (tenant !== undefined) return (await tenantOrExit(db, tenant)).tenantId;
  const tenants = await tenantsHoldingKey(db, key);
  if (tenants.length !== 1 || tenants[0] === undefined) {
    throw new CliError(`RECORD_NOT_FOUND: no record ${key}${tenants.length > 1 ? " (several tenants: name one with --tenant)" : ""}`, exitCodes.usage);
  }
  return tenants[0];
}

function eventLine(event: HistoryEvent): string {
  if (event.type === "held") return `${event.at}  held      ${event.natural_key}  review ${event.review_id} (${event.reason}, ${event.state})`;
  if (event.type === "decision") {
    return `${event.at}  decided   ${event.natural_key}  review ${event.review_id}: ${event.decision} by ${event.operator} (${event.reason})${event.compensation_key ? `  compensation ${event.compensation_key}` : ""}${event.posting_key ? `  posting ${event.posting_key}` : ""}`;
  }
  return `${event.at}  ${event.channel.padEnd(9)} ${event.natural_key}  ${event.outcome}${event.code ? ` ${event.code}` : ""}  via ${event.via}${event.transfer_key ? `  transfer ${event.transfer_key}` : ""}${event.original_ref ? `  original ${event.original_ref}` : ""}${event.detail ? `  (${event.detail})` : ""}`;
}

function printHistory(history: RecordHistory): void {
  printLine(`${history.key}${history.identity_key ? `  payment identity ${history.identity_key}` : ""}`);
  printLine("records:");
  for (const r of history.records) printLine(`  ${r.natural_key}  ${r.channel} ${r.kind} ${r.amount} ${r.currency}  ${r.state}${r.transfer_key ? `  transfer ${r.transfer_key}` : ""}${r.linked_to ? `  linked to ${r.linked_to}` : ""}`);
  printLine("arrivals and decisions:");
  for (const event of history.events) printLine(`  ${eventLine(event)}`);
  printLine(`transfers: ${history.transfers.length}`);
  for (const t of history.transfers) {
    // docs/decisions/0101: a date not recorded (posted before 0035) is the value date, marked
    const settles = `settles ${t.settlement_date}${t.settlement_date_recorded ? "" : " (value date)"}`;
    const legs = t.legs.map((l) => `${l.side} ${l.account} ${l.amount} ${l.currency}`).join(", ");
    printLine(`  ${t.transfer_key}  ${t.kind} ${t.value_date} ${settles}  ${legs}`);
  }
}

export function registerRecordCommands(program: Command): void {
  const record = program.command("record").description("one payment's history across channels");
  record
    .command("show <key>")
    .description("every arrival of a natural key (or payment identity, e2e:<reference>) through any channel, the decision on each, the review decisions and the transfers, in time order")
    .option("--tenant <tenant>", "tenant name or id (needed only when several tenants hold the key)")
    .option("--json", "machine-readable output")
    .action(async (key: string, options: { tenant?: string; json?: boolean }) => {
      const history = await withDatabase(async (db) => recordHistory(db.pool, await tenantOfKey(db.pool, key, options.tenant), key));
      if (!history) throw new CliError(`RECORD_NOT_FOUND: no record ${key}`, exitCodes.usage);
      if (options.json) printJson(history);
      else printHistory(history);
    });
}
