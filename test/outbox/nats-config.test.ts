import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

const fixture = (name: string) => path.join(fileURLToPath(new URL("../../fixtures/ach/", import.meta.url)), name);

// The deciding process is a real `clearline ingest`; only its config file names NATS.
describe("events are queued for NATS by the configuration, file or environment alike", () => {
  let db: TestDatabase;
  const savedNatsUrl = process.env.CLEARLINE_NATS_URL;
  beforeAll(async () => {
    delete process.env.CLEARLINE_NATS_URL; // the child processes inherit this environment
    db = await createTestDatabase();
  });
  afterAll(async () => {
    if (savedNatsUrl !== undefined) process.env.CLEARLINE_NATS_URL = savedNatsUrl;
    await db.drop();
  });

  /** A home whose config.json holds `file`; a tenant and partner in it; the fixture ingested. */
  async function ingestWithConfig(tenant: string, file: Record<string, unknown>): Promise<string[]> {
    const home = mkdtempSync(path.join(tmpdir(), "clearline-nats-config-"));
    writeFileSync(path.join(home, "config.json"), JSON.stringify(file));
    const env = { DATABASE_URL: db.url, CLEARLINE_HOME: home };
    const added = await runCli(["tenant", "add", tenant, "--json"], env);
    expect(added.exitCode).toBe(0);
    const tenantId = (JSON.parse(added.stdout) as { tenant_id: string }).tenant_id;
    expect((await runCli(["partner", "add", "--tenant", tenant, "fedach"], env)).exitCode).toBe(0);
    expect((await runCli(["ingest", fixture("base-valid.ach"), "--tenant", tenant, "--partner", "fedach"], env)).exitCode).toBe(0);
    const { rows } = await db.pool.query<{ destination: string }>(
      "SELECT destination FROM outbox_message WHERE tenant_id = $1 AND message_type = 'file.processed'", [tenantId]);
    return rows.map((row) => row.destination);
  }

  it("natsUrl in the config file alone queues the file.processed event for NATS", async () => {
    expect(await ingestWithConfig("natsfile", { natsUrl: "nats://127.0.0.1:4222" })).toEqual(["nats"]);
  }, 60_000);

  it("without natsUrl anywhere nothing is queued for NATS", async () => {
    expect(await ingestWithConfig("nonats", {})).toEqual([]);
  }, 60_000);
});
