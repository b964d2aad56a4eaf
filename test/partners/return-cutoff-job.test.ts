import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.ts";
import { addAccountAlias } from "../../src/partners/partners.ts";
import { openAccount } from "../../src/ledger/accounts.ts";
import { cutReturnFile, returnFileKeyOf } from "../../src/files/return-cut.ts";
import { latestCutoff } from "../../src/config/return-cutoff-config.ts";
import { runReturnCutoffs } from "../../src/files/return-cutoff-job.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { post, transferOf } from "../support/ledger-fixtures.ts";
import {
  achFixtureDated, givenScene, ingest, settlementOf, type Scene,
} from "../files/support.ts";

describe("serve's return cut-off job: each partner's ACH returns cut at its configured times, keyed as the CLI's cut", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  /** base-valid.ach debits ALAN TURING 980.50 while his account holds 500.00: one R01 pending. */
  async function givenOneReturnPending(name: string): Promise<Scene> {
    const scene = await givenScene(db.pool, name);
    await openAccount(db.pool, { tenantId: scene.tenantId, accountId: "turing", kind: "customer", currency: "USD" });
    await addAccountAlias(db.pool, scene.tenantId, "aba:021000021:9876543", "turing");
    await post(db.pool, transferOf(scene.tenantId, "seed", settlementOf(scene), "turing", 50_000n));
    // Dated Wednesday 31 December 2098: its return at the 2099 cut-offs is in time (decision 0094).
    await ingest(db.pool, scene, achFixtureDated("ach/base-valid.ach", "981231"), "base.ach");
    return scene;
  }

  const returnFiles = async (tenantId: string) => (await db.pool.query<{ file_key: string }>(
    "SELECT file_key FROM partner_outbound_file WHERE tenant_id = $1 AND kind = 'ach.return-file'", [tenantId])).rows.map((r) => r.file_key);

  // Returns are recorded now; cut-offs in 2099 come after them.
  const now = new Date("2099-01-02T16:10:00.000Z");
  const cutoffAt = new Date("2099-01-02T15:00:00.000Z");

  it("cuts at the latest passed cut-off, and the CLI's cut at that instant then makes no second file", async () => {
    const scene = await givenOneReturnPending("cutoff-job-first");
    const settings = [{ tenant: scene.tenantId, partner: scene.partner.partnerId, timesUtc: ["09:00", "15:00", "21:00"] }];
    const [outcome] = await runReturnCutoffs(db.pool, settings, now);
    expect(outcome).toMatchObject({ cutoffAt, result: { kind: "cut", fileKey: returnFileKeyOf(scene.partner.partnerId, cutoffAt), entries: 1 } });
    expect((await cutReturnFile(db.pool, scene.tenantId, scene.partner.partnerId, cutoffAt))).toEqual({ kind: "empty" });
    expect((await runReturnCutoffs(db.pool, settings, now))[0]?.result).toEqual({ kind: "empty" });
    expect(await returnFiles(scene.tenantId)).toEqual([returnFileKeyOf(scene.partner.partnerId, cutoffAt)]);
  });

  it("after the CLI cut at the cut-off, the job's check at the same cut-off makes no second file", async () => {
    const scene = await givenOneReturnPending("cutoff-job-second");
    expect((await cutReturnFile(db.pool, scene.tenantId, scene.partner.partnerId, cutoffAt)).kind).toBe("cut");
    const [outcome] = await runReturnCutoffs(db.pool, [{ tenant: scene.tenantId, partner: scene.partner.partnerId, timesUtc: ["15:00"] }], now);
    expect(outcome?.result).toEqual({ kind: "empty" });
    expect(await returnFiles(scene.tenantId)).toEqual([returnFileKeyOf(scene.partner.partnerId, cutoffAt)]);
  });

  it("names a configured partner that does not exist and cuts nothing for it", async () => {
    const [outcome] = await runReturnCutoffs(db.pool, [{ tenant: "no-such-tenant", partner: "nobody", timesUtc: ["15:00"] }], now);
    expect(outcome?.error).toContain("no-such-tenant");
    expect(outcome?.result).toBeUndefined();
  });

  it("before the day's first cut-off, the latest is yesterday's last", () => {
    expect(latestCutoff(["09:00", "21:00"], new Date("2099-01-02T08:59:00.000Z"))).toEqual(new Date("2099-01-01T21:00:00.000Z"));
  });

  it("refuses a cut-off time that is not HH:MM in UTC, naming the entry", () => {
    const home = mkdtempSync(path.join(tmpdir(), "clearline-cutoff-config-"));
    writeFileSync(path.join(home, "config.json"), JSON.stringify({ returnCutoffs: [{ tenant: "acme", partner: "fedach", timesUtc: ["15:00", "25:00"] }] }));
    const loaded = loadConfig({ CLEARLINE_HOME: home });
    expect(loaded.ok ? [] : loaded.errors.map((e) => e.message)).toEqual([expect.stringContaining("returnCutoffs[0]")]);
  });
});
