import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/transaction.ts";
import { enqueueEvent } from "../../src/outbox/outbox-store.ts";
import { loadWebhookSecretKeys } from "../../src/outbox/webhooks/secret-box.ts";
import { newSigningSecret } from "../../src/outbox/webhooks/signature.ts";
import { disableWebhookEndpoint, findWebhookTarget } from "../../src/outbox/webhooks/webhook-store.ts";
import { runCli } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

describe("clearline webhook and outbox commands", () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  let tenantId: string;
  const home = mkdtempSync(path.join(tmpdir(), "clearline-webhook-cli-"));

  beforeAll(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url, CLEARLINE_HOME: home };
    expect((await runCli(["tenant", "add", "hooked"], env)).exitCode).toBe(0);
    const { rows } = await db.pool.query<{ tenant_id: string }>("SELECT tenant_id FROM tenant WHERE name = 'hooked'");
    tenantId = rows[0]?.tenant_id ?? "";
  });
  afterAll(async () => {
    await db.drop();
    rmSync(home, { recursive: true, force: true });
  });

  it("webhook add prints the signing secret once and stores it sealed, never in clear (regression: secrets were stored in clear); webhook list never shows it", async () => {
    const added = await runCli(["webhook", "add", "--tenant", "hooked", "http://127.0.0.1:9/hooks", "--events", "payment.applied,file.processed", "--json"], env);
    expect(added.exitCode).toBe(0);
    const printed = JSON.parse(added.stdout) as { endpoint_id: string; signing_secret: string; event_types: string[] };
    const endpoint = { endpointId: printed.endpoint_id, signingSecret: printed.signing_secret };
    expect(endpoint.signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(printed.event_types).toEqual(["payment.applied", "file.processed"]);
    const { rows } = await db.pool.query<{ row: string }>("SELECT row_to_json(w)::text AS row FROM webhook_endpoint w WHERE tenant_id = $1 AND endpoint_id = $2", [tenantId, endpoint.endpointId]);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.row).not.toContain(endpoint.signingSecret.slice("whsec_".length, "whsec_".length + 16));
    // What the relay signs with: the secret the operator was given, opened with the service's key file.
    const target = await findWebhookTarget(db.pool, tenantId, endpoint.endpointId, loadWebhookSecretKeys({ home }));
    expect(target?.signingSecret).toBe(endpoint.signingSecret);
    const listed = await runCli(["webhook", "list", "--tenant", "hooked", "--json"], env);
    expect(listed.stdout).toContain(endpoint.endpointId);
    expect(listed.stdout).not.toContain(endpoint.signingSecret);
  });

  it("migrate seals a signing secret stored in clear before secrets were sealed, and deliveries still sign with it", async () => {
    const secret = newSigningSecret();
    // As a row written before migration 0027 holds it.
    await db.pool.query("INSERT INTO webhook_endpoint (tenant_id, endpoint_id, url, event_types, signing_secret) VALUES ($1, 'ep_old', 'http://127.0.0.1:9/old', '{record.suspect}', $2)", [tenantId, secret]);
    const migrated = await runCli(["migrate", "--json"], env);
    expect(migrated.exitCode).toBe(0);
    expect(JSON.parse(migrated.stdout)).toMatchObject({ webhook_secrets_sealed: 1 });
    const { rows } = await db.pool.query<{ row: string; clear: string | null }>("SELECT row_to_json(w)::text AS row, signing_secret AS clear FROM webhook_endpoint w WHERE tenant_id = $1 AND endpoint_id = 'ep_old'", [tenantId]);
    expect(rows[0]?.clear).toBeNull();
    expect(rows[0]?.row).not.toContain(secret.slice("whsec_".length, "whsec_".length + 16));
    expect((await findWebhookTarget(db.pool, tenantId, "ep_old", loadWebhookSecretKeys({ home })))?.signingSecret).toBe(secret);
    expect(JSON.parse((await runCli(["migrate", "--json"], env)).stdout)).toMatchObject({ webhook_secrets_sealed: 0 });
  });

  it("webhook list shows an endpoint disabled after 410 Gone with why and its held events; webhook enable makes them due again", async () => {
    const added = JSON.parse((await runCli(["webhook", "add", "--tenant", "hooked", "http://127.0.0.1:9/gone", "--events", "record.conflict", "--json"], env)).stdout) as { endpoint_id: string };
    const endpointId = added.endpoint_id;
    await withTransaction(db.pool, (tx) => enqueueEvent(tx, { tenantId, eventType: "record.conflict", eventKey: "cli:gone:applied", data: {} }, { nats: false }));
    await disableWebhookEndpoint(db.pool, tenantId, endpointId, "http://127.0.0.1:9/gone answered 410 Gone");
    const listed = await runCli(["webhook", "list", "--tenant", "hooked"], env);
    expect(listed.stdout).toMatch(new RegExp(`${endpointId} .* disabled since \\S+: http://127.0.0.1:9/gone answered 410 Gone; 1 events held`));
    const enabled = await runCli(["webhook", "enable", endpointId, "--tenant", "hooked"], env);
    expect(enabled.stdout).toContain(`${endpointId}: enabled; 1 held events due again`);
    const { rows } = await db.pool.query("SELECT state FROM outbox_message WHERE tenant_id = $1 AND message_key = 'cli:gone:applied' AND destination = $2", [tenantId, `webhook:${endpointId}`]);
    expect(rows).toEqual([{ state: "pending" }]);
    expect((await runCli(["webhook", "list", "--tenant", "hooked"], env)).stdout).toMatch(new RegExp(`${endpointId} .* active`));
    const unknown = await runCli(["webhook", "enable", "ep_none", "--tenant", "hooked"], env);
    expect([unknown.exitCode, unknown.stderr.includes("WEBHOOK_ENDPOINT_UNKNOWN")]).toEqual([2, true]);
  });

  it("webhook add refuses a URL that is not http(s) with exit 2 and stores nothing", async () => {
    const refused = await runCli(["webhook", "add", "--tenant", "hooked", "ftp://x/hooks", "--events", "payment.applied"], env);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain("WEBHOOK_URL_INVALID");
  });

  it("outbox list, show and retry: a dead letter is listed, shown with its payload and made due again; a row that is not dead is not", async () => {
    await withTransaction(db.pool, (tx) => enqueueEvent(tx, { tenantId, eventType: "payment.applied", eventKey: "cli:1:applied", data: { n: 1 } }, { nats: false }));
    await db.pool.query("UPDATE outbox_message SET state = 'dead', attempts = 16, last_error = 'refused' WHERE tenant_id = $1 AND message_key = 'cli:1:applied'", [tenantId]);
    const listed = (JSON.parse((await runCli(["outbox", "list", "--tenant", "hooked", "--state", "dead", "--json"], env)).stdout) as { messages: Array<{ id: string; message_key: string; last_error: string }> }).messages;
    expect(listed).toMatchObject([{ message_key: "cli:1:applied", last_error: "refused" }]);
    const id = listed[0]?.id ?? "";
    const shown = JSON.parse((await runCli(["outbox", "show", id, "--tenant", "hooked", "--json"], env)).stdout) as { payload: unknown; state: string };
    expect(shown).toMatchObject({ state: "dead", payload: { n: 1 } });
    expect((await runCli(["outbox", "retry", id, "--tenant", "hooked"], env)).exitCode).toBe(0);
    const { rows } = await db.pool.query("SELECT state, attempts FROM outbox_message WHERE tenant_id = $1 AND id = $2", [tenantId, id]);
    expect(rows).toEqual([{ state: "pending", attempts: 0 }]);
    const again = await runCli(["outbox", "retry", id, "--tenant", "hooked"], env);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain("OUTBOX_NOT_DEAD");
  });
});
