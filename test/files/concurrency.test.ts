import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processFile } from "../../src/files/pipeline.ts";
import { receiveFile } from "../../src/files/receipt.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { openAccount } from "../../src/ledger/accounts.ts";
import { addAccountAlias } from "../../src/partners/partners.ts";
import { advanceProjection, balanceOf } from "../../src/ledger/balance.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { post, transferOf } from "../support/ledger-fixtures.ts";
import { entrySums } from "../support/money.ts";
import { fixture, givenScene, ingest, noOutcomes, settlementOf, transferCount, writeGeneratedAch } from "./support.ts";

/**
 * base-valid.ach as another file of the same originator: its own creation time (file identity),
 * trace numbers (entry k of copy n gets sequence n * 10 + k) and identification numbers (another
 * invoice), so every entry is a new record and no entry is a suspect repeat of another copy's.
 */
function copyWithOwnTraces(base: Buffer, copy: number): Buffer {
  let entry = 0;
  const creationTime = `${String(Math.floor(copy / 60)).padStart(2, "0")}${String(copy % 60).padStart(2, "0")}`;
  const lines = base.toString("latin1").split("\n").map((line) => {
    if (line.startsWith("1")) return line.slice(0, 29) + creationTime + line.slice(33);
    if (!line.startsWith("6")) return line;
    entry += 1;
    const identification = `INV${copy}-${entry}`.padEnd(15, " ");
    return line.slice(0, 39) + identification + line.slice(54, 79) + "23138010" + String(copy * 10 + entry).padStart(7, "0");
  });
  return Buffer.from(lines.join("\n"), "latin1");
}

// Two workers at once (an SFTP poll and an ops upload of the same file, or two processes resuming
// one file): every record is applied once.
describe("concurrency: overlapping ingestions apply each record once", () => {
  let db: TestDatabase;
  let big: Buffer;
  const entries = 4_000;
  beforeAll(async () => {
    db = await createTestDatabase({ poolMax: 12 });
    const file = path.join(mkdtempSync(path.join(tmpdir(), "clearline-concurrency-")), "payroll.ach");
    await writeGeneratedAch(file, entries, 5);
    big = readFileSync(file);
  });
  afterAll(async () => { await db.drop(); });

  it("applies a file received twice at the same moment once: applied and duplicate add up to one file's records", async () => {
    const scene = await givenScene(db.pool, "same");
    const [a, b] = await Promise.all([ingest(db.pool, scene, big, "sftp-copy.ach", { source: "sftp" }), ingest(db.pool, scene, big, "ops-copy.ach", { source: "http" })]);
    expect(a.outcomes.applied + b.outcomes.applied).toBe(entries);
    expect(a.outcomes.duplicate + b.outcomes.duplicate).toBe(entries);
    expect(await transferCount(db.pool, scene.tenantId)).toBe(entries);
  });

  it("applies the union of an original and its correction ingested at the same moment", async () => {
    const scene = await givenScene(db.pool, "overlap");
    const [original, corrected] = await Promise.all([ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach"), ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected.ach")]);
    const sum = (k: keyof typeof noOutcomes) => original.outcomes[k] + corrected.outcomes[k];
    // Five originals and one new entry applied; the three shared entries duplicate; entry 2 is one
    // applied version and one conflict, whichever file won the race.
    expect({ applied: sum("applied"), duplicate: sum("duplicate"), conflict: sum("conflict") }).toEqual({ applied: 6, duplicate: 3, conflict: 1 });
    expect(await transferCount(db.pool, scene.tenantId)).toBe(6);
  });

  it("lets only one of two workers resuming the same file apply each chunk", async () => {
    const scene = await givenScene(db.pool, "resume");
    const receipt = await receiveFile(db.pool, { tenantId: scene.tenantId, partnerId: scene.partner.partnerId, source: "cli", name: "payroll.ach", content: big });
    if (!receipt.ok) throw new Error(receipt.error.message);
    await Promise.all([processFile(db.pool, scene.tenantId, receipt.value.fileId), processFile(db.pool, scene.tenantId, receipt.value.fileId)]);
    const finished = await processFile(db.pool, scene.tenantId, receipt.value.fileId);
    expect(finished).toMatchObject({ status: "done", records: entries, outcomes: { ...noOutcomes, applied: entries } });
    const { rows } = await db.pool.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM record_outcome WHERE tenant_id = $1`, [scene.tenantId]);
    expect(rows[0]?.n).toBe(BigInt(entries));
    expect(await transferCount(db.pool, scene.tenantId)).toBe(entries);
    expect((await verifyLedger(db.pool)).ok).toBe(true);
  });

  it("takes 64 files debiting one customer at once no further than its balance, while the projection folds", async () => {
    const scene = await givenScene(db.pool, "debits");
    await openAccount(db.pool, { tenantId: scene.tenantId, accountId: "turing", kind: "customer", currency: "USD" });
    await addAccountAlias(db.pool, scene.tenantId, "aba:021000021:9876543", "turing");
    // Each copy debits turing 980.50 (and credits two unknown payees, to suspense): 10 copies' worth.
    await post(db.pool, transferOf(scene.tenantId, "seed", settlementOf(scene), "turing", 980_500n));
    const base = fixture("ach/base-valid.ach");
    let ingesting = true;
    const projector = (async () => {
      while (ingesting) await advanceProjection(db.pool, scene.tenantId);
    })();
    const reports = await Promise.all(Array.from({ length: 64 }, (_, n) => ingest(db.pool, scene, copyWithOwnTraces(base, n + 1), `debit-${n + 1}.ach`)))
      .finally(() => { ingesting = false; });
    await projector;
    const total = (k: keyof typeof noOutcomes) => reports.reduce((sum, r) => sum + r.outcomes[k], 0);
    expect({ applied: total("applied"), rejected: total("rejected") }).toEqual({ applied: 64 * 2 + 10, rejected: 54 });
    const codes = reports.flatMap((r) => r.errors.map((e) => e.code));
    expect(codes).toEqual(Array(54).fill("RECORD_INSUFFICIENT_FUNDS"));
    expect((await balanceOf(db.pool, scene.tenantId, "turing"))?.balanceMinor).toBe(0n);
    expect(await entrySums(db.pool, scene.tenantId, "turing")).toEqual({ debitsMinor: 980_500n, creditsMinor: 980_500n });
  }, 600_000); // waits for 64 ingestions, however busy the machine
});
