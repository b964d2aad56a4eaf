import { userInfo } from "node:os";
import type { Command } from "commander";
import { compensateIncident, type CompensationLine } from "../../incidents/compensate.ts";
import { incidentChannels, openIncident, showIncident, type IncidentChannel, type IncidentDetail, type PerimeterCriteria } from "../../incidents/perimeter.ts";
import { incidentView } from "../../incidents/incident-view.ts";
import { listPausedSources, pauseSource, resumeSource, type SourceName } from "../../incidents/source-pause.ts";
import { findPartner } from "../../partners/partners.ts";
import type { Queryable } from "../../db/pool.ts";
import { tenantOrExit, withDatabase } from "../context.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { moneyText, printJson, printLine } from "../output.ts";

/** "partner:NAME" (or id) or "iso8583", as the operator types it, to the stored source name. */
async function sourceOrExit(db: Queryable, tenantId: string, text: string): Promise<SourceName> {
  if (text === "iso8583") return "iso8583";
  const name = text.startsWith("partner:") ? text.slice("partner:".length) : text;
  const partner = await findPartner(db, tenantId, name);
  if (!partner) throw new CliError(`SOURCE_UNKNOWN: ${text} is neither iso8583 nor a partner of the tenant (partner:NAME)`, exitCodes.usage);
  return `partner:${partner.partnerId}`;
}

/** What was undone of a compensation's transfer, in the currency of its legs when it has any. */
function undoneText(c: CompensationLine): string {
  const currency = c.legs[0]?.currency;
  if (currency === undefined) return `${c.undoneMinor} minor units`;
  return moneyText(c.undoneMinor, currency);
}

function printIncident(incident: IncidentDetail): void {
  printLine(`${incident.incidentId}  "${incident.title}"  opened by ${incident.openedBy}  ${incident.records.length} records  totals ${Object.entries(incident.totals).map(([c, t]) => moneyText(t, c)).join(", ") || "none"}`);
  for (const r of incident.records) {
    printLine(`  ${r.occurredAt}  ${r.channel.padEnd(8)} ${r.naturalKey}  ${moneyText(r.amountMinor, r.currency)}  ${r.transferKey ?? "-"}${r.compensated ? "  (compensated)" : ""}${r.undoneMinor > 0n ? `  (undone ${moneyText(r.undoneMinor, r.currency)})` : ""}  ${r.sourceRef ?? ""}`);
  }
  for (const c of incident.compensations) printLine(`  compensation ${c.compensationKey}: ${c.outcome}${c.detail ? ` (${c.detail})` : ""} by ${c.decidedBy}: ${c.reason}`);
}

export function registerSourceCommands(program: Command): void {
  const source = program.command("source").description("stop and restart a source: a partner's drop folders and SFTP pollers, or the ISO 8583 endpoint");
  for (const verb of ["pause", "resume"] as const) {
    source
      .command(`${verb} <source>`)
      .description(verb === "pause" ? "stop taking new files (partner:NAME) or deciding card messages (iso8583, answered 91)" : "take new work again")
      .requiredOption("--tenant <tenant>", "tenant name or id")
      .option("--reason <reason>", "why (required to pause)")
      .option("--operator <name>", "who (default: the OS user)")
      .option("--json", "machine-readable output")
      .action(async (name: string, options: { tenant: string; reason?: string; operator?: string; json?: boolean }) => {
        if (verb === "pause" && !options.reason) throw new CliError("pausing needs --reason", exitCodes.usage);
        const done = await withDatabase(async (db) => {
          const tenantId = (await tenantOrExit(db.pool, options.tenant)).tenantId;
          const sourceName = await sourceOrExit(db.pool, tenantId, name);
          if (verb === "resume") return { source: sourceName, paused: false, wasPaused: await resumeSource(db.pool, tenantId, sourceName) };
          return { ...(await pauseSource(db.pool, tenantId, sourceName, options.operator ?? userInfo().username, options.reason ?? "")), paused: true };
        });
        if (options.json) return printJson(done);
        if ("pausedBy" in done) printLine(`${name}: paused by ${done.pausedBy} at ${done.pausedAt}: ${done.reason}`);
        else printLine(`${name}: ${done.wasPaused ? "resumed" : "was not paused"}`);
      });
  }
  source
    .command("list")
    .description("paused sources of a tenant")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .option("--json", "machine-readable output")
    .action(async (options: { tenant: string; json?: boolean }) => {
      const paused = await withDatabase(async (db) => listPausedSources(db.pool, (await tenantOrExit(db.pool, options.tenant)).tenantId));
      if (options.json) return printJson(paused);
      for (const p of paused) printLine(`${p.source}  paused by ${p.pausedBy} at ${p.pausedAt}: ${p.reason}`);
    });
}

export function registerIncidentCommands(program: Command): void {
  const incident = program.command("incident").description("incidents: the full perimeter of what was affected, keyed compensations, the record of who decided");
  incident
    .command("perimeter")
    .description("take every record of the window (all channels, or filtered) with its transfer and totals, and record it as an incident")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .requiredOption("--since <time>", "from (inclusive), a date or an ISO timestamp")
    .requiredOption("--until <time>", "to (exclusive)")
    .requiredOption("--title <title>", "what happened, in a line")
    .option("--channel <channel>", `one of ${incidentChannels.join(", ")}`)
    .option("--partner <partner>", "file records of one partner (name or id)")
    .option("--key-prefix <prefix>", "natural keys starting with it")
    .option("--operator <name>", "who (default: the OS user)")
    .option("--json", "machine-readable output")
    .action(async (options: { tenant: string; since: string; until: string; title: string; channel?: string; partner?: string; keyPrefix?: string; operator?: string; json?: boolean }) => {
      if (options.channel !== undefined && !incidentChannels.includes(options.channel as IncidentChannel)) throw new CliError(`INCIDENT_CHANNEL_UNKNOWN: --channel is one of ${incidentChannels.join(", ")}`, exitCodes.usage);
      const opened = await withDatabase(async (db) => {
        const tenantId = (await tenantOrExit(db.pool, options.tenant)).tenantId;
        const criteria: PerimeterCriteria = { since: options.since, until: options.until };
        if (options.channel) criteria.channel = options.channel as IncidentChannel;
        if (options.keyPrefix) criteria.keyPrefix = options.keyPrefix;
        if (options.partner) {
          const partner = await findPartner(db.pool, tenantId, options.partner);
          if (!partner) throw new CliError(`SOURCE_UNKNOWN: no partner ${options.partner}`, exitCodes.usage);
          criteria.partner = partner.partnerId;
        }
        return openIncident(db.pool, tenantId, options.title, criteria, options.operator ?? userInfo().username);
      });
      if (!opened.ok) throw new CliError(`${opened.error.code}: ${opened.error.message}`, exitCodes.usage);
      if (options.json) return printJson(incidentView(opened.value));
      printIncident(opened.value);
    });
  incident
    .command("show <incident>")
    .description("an incident as recorded: its perimeter and every compensation decided")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .option("--json", "machine-readable output")
    .action(async (incidentId: string, options: { tenant: string; json?: boolean }) => {
      const shown = await withDatabase(async (db) => showIncident(db.pool, (await tenantOrExit(db.pool, options.tenant)).tenantId, incidentId));
      if (!shown) throw new CliError(`INCIDENT_UNKNOWN: no incident ${incidentId}`, exitCodes.usage);
      if (options.json) return printJson(incidentView(shown));
      printIncident(shown);
    });
  incident
    .command("compensate <incident>")
    .description("compensate every transfer of the perimeter, each keyed <transfer key>:compensate (once, whoever asks); --dry-run first")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .requiredOption("--reason <reason>", "why: kept with each compensation")
    .option("--operator <name>", "who decides (default: the OS user)")
    .option("--dry-run", "say what would be posted, post nothing")
    .option("--json", "machine-readable output")
    .action(async (incidentId: string, options: { tenant: string; reason: string; operator?: string; dryRun?: boolean; json?: boolean }) => {
      const plan = await withDatabase(async (db) => compensateIncident(db.pool, {
        tenantId: (await tenantOrExit(db.pool, options.tenant)).tenantId, incidentId, reason: options.reason,
        operator: options.operator ?? userInfo().username, dryRun: options.dryRun === true,
      }));
      if (!plan.ok) throw new CliError(`${plan.error.code}: ${plan.error.message}`, exitCodes.usage);
      if (options.json) return printJson(plan.value);
      for (const c of plan.value.compensations) printLine(`${c.compensationKey}: ${c.outcome}${c.undoneMinor > 0n ? ` (already undone ${undoneText(c)}${c.legs[0] ? `, compensates ${moneyText(c.legs[0].amountMinor, c.legs[0].currency)}` : ""})` : ""}${c.detail ? ` (${c.detail})` : ""}`);
      if (plan.value.compensations.some((c) => c.outcome === "refused")) process.exitCode = exitCodes.failure;
    });
}
