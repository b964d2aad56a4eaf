import type { Command } from "commander";

type Register = (program: Command) => void;

/**
 * Every top-level command, the module that defines it, and a one-line summary for the help
 * screen. The CLI loads only the module of the command it runs (serve loads fastify and pg,
 * inspect the XML stack, iso8583 neither), so `clearline --help` loads none of them.
 */
export interface TopLevelCommand {
  name: string;
  summary: string;
  load(): Promise<Register>;
}

const ledger = async (): Promise<Register> => (await import("./commands/ledger.ts")).registerLedgerCommands;
const partner = async (): Promise<Register> => (await import("./commands/partner.ts")).registerPartnerCommands;
const outbox = async (): Promise<Register> => {
  const module = await import("./commands/outbox.ts");
  return (program) => { module.registerOutboxCommands(program); module.registerWebhookCommands(program); };
};
const files = async (): Promise<Register> => (await import("./commands/files.ts")).registerFilesCommands;

export const topLevelCommands: readonly TopLevelCommand[] = [
  { name: "serve", summary: "run the service: HTTP API, ISO 8583 endpoint, file sources, background jobs", load: async () => (await import("./commands/serve.ts")).registerServeCommand },
  { name: "status", summary: "is the service ready: the same checks as /readyz, with the reason for each failing one", load: async () => (await import("./commands/status.ts")).registerStatusCommand },
  { name: "migrate", summary: "apply pending SQL migrations", load: async () => (await import("./commands/migrate.ts")).registerMigrateCommand },
  { name: "balance", summary: "an account's balance", load: ledger },
  { name: "ledger", summary: "ledger verify and statistics", load: ledger },
  { name: "operator", summary: "operators of the console (roles, sign-in secret) and the four-eyes amount", load: async () => (await import("./commands/operator.ts")).registerOperatorCommands },
  { name: "tenant", summary: "tenants and their API keys", load: async () => (await import("./commands/tenant.ts")).registerTenantCommands },
  {
    name: "key", summary: "a tenant's API keys: create, list, revoke, rotate with an overlap",
    load: async () => (await import("./commands/key.ts")).registerKeyCommands,
  },
  { name: "iso8583", summary: "read and write ISO 8583 messages", load: async () => (await import("./commands/iso8583.ts")).registerIso8583Command },
  { name: "inspect", summary: "read an ACH or ISO 20022 file without a database", load: async () => (await import("./commands/inspect.ts")).registerInspectCommand },
  { name: "partner", summary: "clearing partners and their accounts", load: partner },
  { name: "alias", summary: "counterparty aliases -> ledger accounts", load: partner },
  { name: "ingest", summary: "receive and apply files, or preview them with --dry-run", load: async () => (await import("./commands/ingest.ts")).registerIngestCommand },
  { name: "files", summary: "received files", load: files },
  { name: "file", summary: "one received file and its per-record outcomes", load: files },
  { name: "review", summary: "conflicts and suspects held for a person, and their decisions", load: async () => (await import("./commands/review.ts")).registerReviewCommands },
  { name: "proposal", summary: "decisions above the four-eyes amount: list, approve (a second approver), cancel", load: async () => (await import("./commands/proposal.ts")).registerProposalCommands },
  {
    name: "payment",
    summary: "one payment of the HTTP API by id or client reference, as GET /v1/payments/{id}",
    load: async () => (await import("./commands/payment.ts")).registerPaymentCommands,
  },
  { name: "record", summary: "one payment's history across channels: every arrival, decision and transfer", load: async () => (await import("./commands/record.ts")).registerRecordCommands },
  { name: "statement", summary: "an account's entries, each with its origin; corrections marked as such", load: async () => (await import("./commands/statement.ts")).registerStatementCommand },
  {
    name: "settlement", summary: "what settles with a partner on a date: credits, debits, returns",
    load: async () => (await import("./commands/settlement.ts")).registerSettlementCommands,
  },
  { name: "recon", summary: "reconcile settlement accounts against statements: import, run, show, correct, explain", load: async () => (await import("./commands/recon.ts")).registerReconCommands },
  { name: "source", summary: "pause and resume a partner's file sources or the ISO 8583 endpoint (incidents)", load: async () => (await import("./commands/incident.ts")).registerSourceCommands },
  { name: "incident", summary: "incident perimeter, keyed compensation batch, the incident record", load: async () => (await import("./commands/incident.ts")).registerIncidentCommands },
  { name: "outbox", summary: "messages leaving clearline (webhooks, NATS, partners): list, show, retry dead letters", load: outbox },
  { name: "webhook", summary: "webhook endpoints and their event subscriptions", load: outbox },
  { name: "card", summary: "cards of the ISO 8583 channel", load: async () => (await import("./commands/card.ts")).registerCardCommands },
];

/** The command named first in `args`, if it is one of ours. */
export function topLevelCommandIn(args: readonly string[]): TopLevelCommand | undefined {
  const name = args.find((arg) => !arg.startsWith("-"));
  return name === undefined ? undefined : topLevelCommands.find((command) => command.name === name);
}
