import type { Command } from "commander";
import { limits } from "../../config/limits.ts";
import type { OutboxErrorCode } from "../../errors/codes/outbox.ts";
import {
  findOutbox, listOutbox, outboxMessageView, retryDead, type OutboxRow, type OutboxState,
} from "../../outbox/outbox-store.ts";
import { loadWebhookSecretKeys } from "../../outbox/webhooks/secret-box.ts";
import { newSigningSecret } from "../../outbox/webhooks/signature.ts";
import {
  addWebhookEndpoint, countWebhookEndpoints, enableWebhookEndpoint, listWebhookEndpoints,
  webhookEndpointView, type ListedWebhookEndpoint,
} from "../../outbox/webhooks/webhook-store.ts";
import { tenantOrExit, withDatabase } from "../context.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";

/** A usage error under its catalog code (src/errors/codes/outbox.ts): the code is checked at compile time. */
function usageError(code: OutboxErrorCode, detail: string): CliError {
  return new CliError(`${code}: ${detail}`, exitCodes.usage);
}

const STATES: readonly OutboxState[] = ["pending", "delivering", "delivered", "dead", "held"];

function rowLine(row: OutboxRow): string {
  return `${row.id}  ${row.state.padEnd(10)} ${String(row.attempts).padStart(2)}  ${row.messageType}  ${row.destination}  ${row.messageKey}${row.lastError ? `  last error: ${row.lastError}` : ""}`;
}

export function registerOutboxCommands(program: Command): void {
  const outbox = program.command("outbox").description("messages leaving clearline: list, show, retry dead letters");
  outbox
    .command("list")
    .description("a tenant's outbox rows, newest first")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .option("--state <state>", `only rows in this state: ${STATES.join(", ")}`)
    .option("--json", "machine-readable output")
    .action(async (options: { tenant: string; state?: string; json?: boolean }) => {
      if (options.state !== undefined && !STATES.includes(options.state as OutboxState)) throw usageError("OUTBOX_STATE_UNKNOWN", `--state must be one of ${STATES.join(", ")}`);
      const rows = await withDatabase(async (db) => {
        const tenant = await tenantOrExit(db.pool, options.tenant);
        return listOutbox(db.pool, tenant.tenantId, options.state === undefined ? {} : { state: options.state as OutboxState }, limits.outbox.listRowsMax);
      });
      if (options.json) return printJson({ messages: rows.map(outboxMessageView) });
      for (const row of rows) printLine(rowLine(row));
    });
  outbox
    .command("show <id>")
    .description("one outbox row with its payload")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .option("--json", "machine-readable output")
    .action(async (id: string, options: { tenant: string; json?: boolean }) => {
      if (!/^\d{1,18}$/.test(id)) throw usageError("OUTBOX_ID_INVALID", `${id} is not an outbox row id`);
      const row = await withDatabase(async (db) => findOutbox(db.pool, (await tenantOrExit(db.pool, options.tenant)).tenantId, id));
      if (!row) throw usageError("OUTBOX_MESSAGE_UNKNOWN", `no outbox row ${id}`);
      if (options.json) return printJson(outboxMessageView(row));
      printLine(rowLine(row));
      printLine(`created ${row.createdAt}${row.deliveredAt ? `, delivered ${row.deliveredAt}` : `, next attempt ${row.nextAttemptAt}`}`);
      printLine(JSON.stringify(row.payload, null, 2));
    });
  outbox
    .command("retry <id>")
    .description("a dead letter is due again now, with a fresh attempt budget (only dead rows)")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .option("--json", "machine-readable output")
    .action(async (id: string, options: { tenant: string; json?: boolean }) => {
      if (!/^\d{1,18}$/.test(id)) throw usageError("OUTBOX_ID_INVALID", `${id} is not an outbox row id`);
      const retried = await withDatabase(async (db) => retryDead(db.pool, (await tenantOrExit(db.pool, options.tenant)).tenantId, id));
      if (!retried) throw usageError("OUTBOX_NOT_DEAD", `outbox row ${id} is not a dead letter (clearline outbox show ${id})`);
      if (options.json) return printJson({ id, state: "pending" });
      printLine(`${id}: due again`);
    });
}

export function registerWebhookCommands(program: Command): void {
  const webhook = program.command("webhook").description("webhook endpoints: events POSTed, signed per the Standard Webhooks scheme");
  webhook
    .command("add <url>")
    .description("subscribe URL to events; prints the signing secret once")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .requiredOption("--events <types>", "comma-separated event types: payment.applied, file.processed, record.conflict, record.suspect, authorization.reversed, recon.difference")
    .option("--json", "machine-readable output")
    .action(async (url: string, options: { tenant: string; events: string; json?: boolean }) => {
      if (!/^https?:\/\/[^\s]+$/.test(url)) throw usageError("WEBHOOK_URL_INVALID", `${url} is not an http(s) URL`);
      const events = [...new Set(options.events.split(",").map((e) => e.trim()).filter((e) => e !== ""))];
      if (events.length === 0 || events.length > limits.outbox.webhookEventTypesMax || events.some((e) => !/^[a-z0-9]+(\.[a-z0-9-]+)+$/.test(e))) {
        throw usageError("WEBHOOK_EVENTS_INVALID", `--events takes 1 to ${limits.outbox.webhookEventTypesMax} event types like payment.applied`);
      }
      const secret = newSigningSecret();
      const endpoint = await withDatabase(async (db, config) => {
        const tenant = await tenantOrExit(db.pool, options.tenant);
        if ((await countWebhookEndpoints(db.pool, tenant.tenantId)) >= limits.outbox.webhookEndpointsPerTenantMax) {
          throw usageError("WEBHOOK_ENDPOINTS_FULL", `tenant ${options.tenant} has ${limits.outbox.webhookEndpointsPerTenantMax} endpoints`);
        }
        // Stored sealed with the key serve delivers with (CLEARLINE_HOME/webhook-secret.key; 0065).
        const keys = loadWebhookSecretKeys({ home: config.home, secretHex: config.webhookSecretKey });
        return addWebhookEndpoint(db.pool, tenant.tenantId, url, events, secret, keys);
      });
      if (options.json) {
        const listed = { ...endpoint, status: "active" as const, disabledAt: null, disabledReason: null, heldEvents: 0 };
        return printJson({ ...webhookEndpointView(listed), signing_secret: secret });
      }
      printLine(`${endpoint.endpointId}  ${url}  ${events.join(",")}`);
      printLine(`signing secret (shown once; keep it with the receiver): ${secret}`);
    });
  webhook
    .command("list")
    .description("a tenant's webhook endpoints and their status (never their secrets)")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .option("--json", "machine-readable output")
    .action(async (options: { tenant: string; json?: boolean }) => {
      const endpoints = await withDatabase(async (db) => listWebhookEndpoints(db.pool, (await tenantOrExit(db.pool, options.tenant)).tenantId));
      if (options.json) return printJson({ webhooks: endpoints.map(webhookEndpointView) });
      for (const e of endpoints) printLine(`${e.endpointId}  ${e.url}  ${e.eventTypes.join(",")}  ${statusText(e)}`);
    });
  webhook
    .command("enable <id>")
    .description("enable an endpoint disabled after it answered 410 Gone: its held events are due again")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .option("--json", "machine-readable output")
    .action(async (id: string, options: { tenant: string; json?: boolean }) => {
      const enabled = await withDatabase(async (db) => {
        const tenant = await tenantOrExit(db.pool, options.tenant);
        return enableWebhookEndpoint(db.pool, tenant.tenantId, id);
      });
      if (!enabled) throw usageError("WEBHOOK_ENDPOINT_UNKNOWN", `no webhook endpoint ${id}`);
      if (options.json) return printJson({ endpoint_id: id, status: "active", ...enabled });
      printLine(enabled.wasDisabled ? `${id}: enabled; ${enabled.released} held events due again` : `${id}: was not disabled`);
    });
}

function statusText(endpoint: ListedWebhookEndpoint): string {
  if (endpoint.status === "active") return "active";
  return `disabled since ${endpoint.disabledAt ?? "?"}: ${endpoint.disabledReason ?? "?"}; ${endpoint.heldEvents} events held`
    + ` (clearline webhook enable ${endpoint.endpointId} --tenant ...)`;
}
