import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OutboxMessage } from "../../src/outbox/deliverer.ts";
import { newSigningSecret } from "../../src/outbox/webhooks/signature.ts";
import { webhookBody } from "../../src/outbox/webhooks/webhook-deliverer.ts";
import { addWebhookEndpoint } from "../../src/outbox/webhooks/webhook-store.ts";
import { addAccountAlias, createPartner } from "../../src/partners/partners.ts";
import { registerFileRoutes } from "../../src/api/routes/files.ts";
import { ApiClient } from "../support/api-client.ts";
import { fund, paymentRequest, type ApiWorld } from "../support/api-scenario.ts";
import { givenTenant, startTestApi } from "../support/api-server.ts";
import { runCliInProcess } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { testWebhookKeys } from "../support/outbox.ts";
import { fixture } from "../files/support.ts";

/**
 * The shape of a JSON value: an object's keys, each with the shape of its value (recursively),
 * an array's distinct element shapes, and the type of anything else (null is a type of its own).
 */
type Shape = string | { [key: string]: Shape } | { elements: Shape[] };

function shapeOf(value: unknown): Shape {
  if (value === null) return "null";
  if (Array.isArray(value)) {
    const elements = new Map(value.map((v) => { const s = shapeOf(v); return [JSON.stringify(s), s]; }));
    return { elements: [...elements.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, s]) => s) };
  }
  if (typeof value === "object") {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, shapeOf((value as Record<string, unknown>)[k])]));
  }
  return typeof value;
}

/** Every key of a JSON value, at every depth. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf);
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) => [k, ...keysOf(v)]);
}

const ENVELOPE_SHAPE = {
  data: "object-any", event_id: "string", event_type: "string", event_version: "number",
  occurred_at: "string", tenant_id: "string", timestamp: "string", type: "string",
};

/**
 * One output style (docs/decisions/0107): a payment, a file and a review item read by the CLI
 * (--json), answered by the HTTP API and told by their events have one shape, the HTTP API's.
 */
describe("the CLI, the HTTP API and the events show one object in one shape", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  const env = () => ({ DATABASE_URL: db.url });
  const cli = async (args: string[]): Promise<unknown> => {
    const run = await runCliInProcess([...args, "--tenant", world.tenantId, "--json"], env());
    expect(run.exitCode, run.stderr).toBe(0);
    return JSON.parse(run.stdout);
  };

  /** What the webhook endpoint is sent for the event of this type (and key), parsed. */
  const sentEvent = async (type: string, key?: string): Promise<Record<string, unknown>> => {
    const { rows } = await db.pool.query<{ id: string; destination: string; message_key: string; payload: unknown; created_at: Date }>(
      `SELECT id::text, destination, message_key, payload, created_at FROM outbox_message
        WHERE tenant_id = $1 AND message_type = $2 AND ($3::text IS NULL OR message_key = $3) ORDER BY id`,
      [world.tenantId, type, key ?? null]);
    const row = rows[0];
    expect(row, `a ${type} event`).toBeDefined();
    if (!row) return {};
    const message: OutboxMessage = {
      tenantId: world.tenantId, id: row.id, destination: row.destination, messageType: type,
      messageKey: row.message_key, payload: row.payload, attempts: 1, createdAt: row.created_at,
    };
    return JSON.parse(webhookBody(message)) as Record<string, unknown>;
  };

  const expectEnvelope = (event: Record<string, unknown>, type: string) => {
    expect({ ...shapeOf(event) as Record<string, Shape>, data: "object-any" }).toEqual(ENVELOPE_SHAPE);
    expect(event).toMatchObject({ event_type: type, type, event_version: 1, tenant_id: world.tenantId });
    expect(event.occurred_at).toBe(event.timestamp);
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    // The API as serve runs it, file uploads included (service-routes.ts).
    const api = await startTestApi(db.pool, [(app) => registerFileRoutes(app, { pool: db.pool })]);
    const { tenantId, apiKey } = await givenTenant(db.pool, "one-style");
    world = { api, client: new ApiClient(api.baseUrl, apiKey), tenantId, apiKey };
    for (const [id, kind] of [["settlement", "settlement"], ["alice", "customer"], ["bob", "customer"], ["payee-two", "customer"]]) {
      expect((await world.client.post("/v1/accounts", { id, kind, currency: "USD" })).status).toBe(201);
    }
    await addWebhookEndpoint(db.pool, world.tenantId, "http://127.0.0.1:9/hooks",
      ["payment.applied", "file.processed", "record.conflict"], newSigningSecret(), testWebhookKeys());
    const partner = await createPartner(db.pool, world.tenantId, "fedach");
    if (!partner.ok) throw new Error(partner.error.message);
    await addAccountAlias(db.pool, world.tenantId, "aba:021000021:1000002", "payee-two");
  });
  afterAll(async () => {
    await world?.api.close();
    await db?.drop();
  });

  it("a payment: `payment show --json`, GET /v1/payments/{id} and payment.applied's data", async () => {
    await fund(world.client, "alice", "50.00");
    const created = await world.client.post("/v1/payments", paymentRequest("style-1", "12.34"), { "idempotency-key": randomUUID() });
    expect(created.status).toBe(201);
    const http = (await world.client.get(`/v1/payments/${created.json.id}`)).json;
    const printed = await cli(["payment", "show", created.json.id]);
    const event = await sentEvent("payment.applied", "api:style-1:debit:applied");
    expectEnvelope(event, "payment.applied");
    expect(shapeOf(printed)).toEqual(shapeOf(http));
    expect(shapeOf(event.data)).toEqual(shapeOf(http));
    expect(printed).toEqual(http);
    expect(event.data).toEqual(http);
    expect(http).toMatchObject({ client_reference: "style-1", amount: "12.34", currency: "USD" });
  });

  it("a file: `files --json` and GET /v1/files items, file.processed's data; `file show --json` and GET /v1/files/{id}", async () => {
    for (const name of ["original.ach", "corrected.ach"]) {
      const uploaded = await world.client.post(`/v1/files?name=${name}&partner=fedach`,
        fixture(`ach/${name}`).toString("latin1"),
        { "idempotency-key": randomUUID(), "content-type": "application/octet-stream" });
      expect(uploaded.status, uploaded.text).toBe(201);
    }
    // The HTTP list pages oldest first; the CLI lists newest first: compared by name.
    type Listed = Array<{ file_id: string; name: string }>;
    const byName = (files: Listed) => [...files].sort((a, b) => a.name.localeCompare(b.name));
    const httpFiles = byName((await world.client.get("/v1/files")).json.data as Listed);
    const printedFiles = byName((await cli(["files"]) as { files: Listed }).files);
    expect(printedFiles).toHaveLength(2);
    expect(shapeOf(printedFiles)).toEqual(shapeOf(httpFiles));
    expect(printedFiles).toEqual(httpFiles);
    const corrected = httpFiles.find((f) => f.name === "corrected.ach");
    const event = await sentEvent("file.processed", `${corrected?.file_id}:processed`);
    expectEnvelope(event, "file.processed");
    expect(shapeOf(event.data)).toEqual(shapeOf(corrected));
    expect(event.data).toEqual(corrected);

    const httpReport = (await world.client.get(`/v1/files/${corrected?.file_id}`)).json;
    const printedReport = await cli(["file", "show", corrected?.file_id ?? ""]);
    expect(shapeOf(printedReport)).toEqual(shapeOf(httpReport));
    expect(printedReport).toEqual(httpReport);
  });

  it("a review item: `review list --json` and GET /v1/reviews, record.conflict's data", async () => {
    const http = (await world.client.get("/v1/reviews?state=open")).json.data as Array<{ review_id: string }>;
    const printed = (await cli(["review", "list"]) as { reviews: unknown[] }).reviews;
    expect(http).toHaveLength(1);
    expect(shapeOf(printed)).toEqual(shapeOf(http));
    expect(printed).toEqual(http);
    const event = await sentEvent("record.conflict", `${http[0]?.review_id}:held`);
    expectEnvelope(event, "record.conflict");
    expect(shapeOf(event.data)).toEqual(shapeOf(http[0]));
    expect(event.data).toEqual(http[0]);
  });

  it("names every field of every event in snake_case", async () => {
    const { rows } = await db.pool.query<{ id: string; message_type: string; message_key: string; payload: unknown; created_at: Date }>(
      "SELECT id::text, message_type, message_key, payload, created_at FROM outbox_message WHERE tenant_id = $1", [world.tenantId]);
    expect(new Set(rows.map((r) => r.message_type))).toEqual(new Set(["payment.applied", "file.processed", "record.conflict"]));
    for (const row of rows) {
      const body = JSON.parse(webhookBody({
        tenantId: world.tenantId, id: row.id, destination: "webhook:x", messageType: row.message_type,
        messageKey: row.message_key, payload: row.payload, attempts: 1, createdAt: row.created_at,
      })) as unknown;
      expect(keysOf(body).filter((k) => !/^[a-z][a-z0-9_]*$/.test(k)), row.message_type).toEqual([]);
    }
  });
});
