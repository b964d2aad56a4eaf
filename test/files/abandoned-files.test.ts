import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.ts";
import { AbandonedFiles } from "../../src/files/abandoned-files.ts";
import { processFile } from "../../src/files/pipeline.ts";
import { receiveFile } from "../../src/files/receipt.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";
import { startFaultProxy, type FaultProxy } from "../support/net/index.ts";
import { balances, fixture, givenScene, settlementOf, type Scene } from "./support.ts";

const quiet = createLogger({ level: "silent" });
const shortRetries = { firstRetryMs: 50, retryMaxMs: 200 };

/**
 * An uploaded file whose run the database cut short (the soak: a reset partition of PostgreSQL
 * while a POST /v1/files was processing) stayed `processing` until the periodic job found its
 * heartbeat a minute old. The process whose run failed takes it up again once the database
 * answers.
 */
describe("a file whose run failed in this process", () => {
  let db: TestDatabase;
  let scene: Scene;
  let proxy: FaultProxy;
  let cutPool: Pool;

  beforeAll(async () => {
    db = await createTestDatabase();
    scene = await givenScene(db.pool, "abandoned-files");
    const target = new URL(db.url);
    proxy = await startFaultProxy({
      listen: { host: "127.0.0.1" }, target: { host: target.hostname, port: Number(target.port) },
    });
    const through = new URL(db.url);
    through.host = `${proxy.host}:${proxy.port}`;
    cutPool = createPool(through.toString(), { max: 2 });
  });
  afterAll(async () => {
    await cutPool.end();
    await proxy.close();
    await db.drop();
  });

  async function received(name: string): Promise<string> {
    const receipt = await receiveFile(db.pool, {
      tenantId: scene.tenantId, partnerId: scene.partner.partnerId, source: "http", name,
      content: fixture("ach/original.ach"),
    });
    if (!receipt.ok) throw new Error(receipt.error.message);
    return receipt.value.fileId;
  }

  async function statusOf(fileId: string): Promise<string | undefined> {
    const { rows } = await db.pool.query<{ status: string }>(
      "SELECT status FROM received_file WHERE tenant_id = $1 AND file_id = $2",
      [scene.tenantId, fileId]);
    return rows[0]?.status;
  }

  it("is finished by that process once the database answers again, its records applied once",
    async () => {
    const fileId = await received("cut-short.ach");
    const retries = new AbandonedFiles(cutPool, quiet, {}, shortRetries);
    proxy.cut({ direction: "toClient", afterBytes: 0, how: "reset" });
    await expect(processFile(cutPool, scene.tenantId, fileId, retries.ingestOptions()))
      .rejects.toThrow();
    expect(await statusOf(fileId)).not.toBe("done");
    await proxy.heal();
    await eventually(async () => (await statusOf(fileId)) === "done");
    await retries.stop();
    expect((await balances(db.pool, scene.tenantId))[settlementOf(scene)]).toBe(150_000n);
  });
});
