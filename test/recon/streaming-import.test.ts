import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { importExternalFile } from "../../src/recon/external-items.ts";
import { readExternalItems } from "../../src/recon/read-external-file.ts";
import { bufferSource, fileSource, type StatementSource } from "../../src/recon/statement-source.ts";
import type { ExternalItem } from "../../src/protocols/statement/external-item.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts } from "../support/ledger-fixtures.ts";
import { camt053 } from "./statements.ts";

// An import streams its file (docs/decisions/0040): these pin that reading in pieces changes
// nothing about what is stored, and that what is refused stores nothing.

let tenantCounter = 0;

async function givenTenant(db: TestDatabase): Promise<string> {
  const tenantId = `stream-${++tenantCounter}`;
  await givenAccounts(db.pool, tenantId, [["settlement", "settlement"], ["alice", "customer"]]);
  return tenantId;
}

async function storedItems(db: TestDatabase, tenantId: string): Promise<unknown[]> {
  const { rows } = await db.pool.query(
    `SELECT item_key, amount_minor::text, direction, refs, duplicate_of FROM recon_external_item WHERE tenant_id = $1 ORDER BY item_key`, [tenantId]);
  return rows;
}

async function importsOf(db: TestDatabase, tenantId: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM recon_import WHERE tenant_id = $1", [tenantId]);
  return rows[0]?.n ?? -1;
}

const statement = camt053({ id: "ST1", entries: [
  { amount: "10.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "W1", info: "Zahlung für Müller" },
  { amount: "20.00", date: "2026-12-01", svcrRef: "B2", endToEndId: "W2", direction: "DBIT" },
  { amount: "30.00", date: "2026-12-01", svcrRef: "B3", parts: [{ amount: "10.00", endToEndId: "W3" }, { amount: "20.00", endToEndId: "W4" }] },
] });

describe("a statement import streams its file", () => {
  let db: TestDatabase;
  let dir: string;
  beforeAll(async () => { db = await createTestDatabase(); dir = mkdtempSync(path.join(tmpdir(), "clearline-stream-")); });
  afterAll(async () => { rmSync(dir, { recursive: true, force: true }); await db.drop(); });

  it("stores the same items from a file on disk and from 7-byte pieces as from its bytes in one piece", async () => {
    const whole = await givenTenant(db);
    const fromFile = await givenTenant(db);
    const inPieces = await givenTenant(db);
    const file = path.join(dir, "statement.xml");
    writeFileSync(file, statement);
    expect((await importExternalFile(db.pool, { tenantId: whole, accountId: "settlement", name: "s.xml", content: statement })).ok).toBe(true);
    expect((await importExternalFile(db.pool, { tenantId: fromFile, accountId: "settlement", name: "s.xml", source: await fileSource(file) })).ok).toBe(true);
    expect((await importExternalFile(db.pool, { tenantId: inPieces, accountId: "settlement", name: "s.xml", source: bufferSource(statement, 7) })).ok).toBe(true);
    const expected = await storedItems(db, whole);
    expect(expected).toHaveLength(3);
    expect(await storedItems(db, fromFile)).toEqual(expected);
    expect(await storedItems(db, inPieces)).toEqual(expected);
  });

  it("reads a CSV whose rows and multi-byte characters are split across pieces", async () => {
    const csv = Buffer.from("id,date,amount,currency,reference,description\r\nR1,2026-12-01,12.50,EUR,W1,Müller\r\nR2,2026-12-01,-3.00,EUR,W2,Straße\r\nR3,2026-12-02,1.00,EUR,W3,");
    const items: ExternalItem[] = [];
    const read = await readExternalItems(bufferSource(csv, 3), "csv", limits.recon, 2, async (batch) => { items.push(...batch); });
    expect(read.ok && read.value.findings).toEqual([]);
    expect(items.map((i) => [i.itemKey, i.direction, i.amountMinor, i.refs, i.description])).toEqual([
      ["csv:R1", "C", 1250n, ["ref:W1"], "Müller"], ["csv:R2", "D", 300n, ["ref:W2"], "Straße"], ["csv:R3", "C", 100n, ["ref:W3"], undefined],
    ]);
  });

  it("refuses a CSV line longer than its bound, at that line, without holding the rest", async () => {
    const csv = Buffer.from(`id,date,amount,currency,reference\nR1,2026-12-01,1.00,EUR,W1\nR2,2026-12-01,1.00,EUR,${"X".repeat(200)}`);
    const read = await readExternalItems(bufferSource(csv, 16), "csv", { ...limits.recon, csvLineCharsMax: 100 }, 10, async () => undefined);
    expect(read.ok && read.value.findings.map((f) => [f.code, f.position.line])).toEqual([["RECON_ENTRY_FIELD_INVALID", 3]]);
  });

  it("refuses a file over the size bound before reading a byte of it, and stores nothing", async () => {
    const tenantId = await givenTenant(db);
    const tooLarge: StatementSource = { byteLength: limits.recon.fileBytesMax + 1, chunks: () => { throw new Error("a file over the bound was read"); } };
    const imported = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: "huge.xml", source: tooLarge });
    expect(!imported.ok && imported.error.map((f) => f.code)).toEqual(["RECON_ENTRIES_TOO_MANY"]);
    expect(await importsOf(db, tenantId)).toBe(0);
  });

  it("refuses a file whose bytes changed between taking its identity and reading its items, and stores nothing", async () => {
    const tenantId = await givenTenant(db);
    const later = camt053({ id: "ST1", entries: [{ amount: "99.00", date: "2026-12-01", svcrRef: "B9" }] });
    let readings = 0;
    const changing: StatementSource = { byteLength: statement.length, chunks: () => bufferSource(readings++ === 0 ? statement : later).chunks() };
    const imported = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: "moving.xml", source: changing });
    expect(!imported.ok && imported.error.map((f) => f.code)).toEqual(["RECON_FILE_CHANGED"]);
    expect(await importsOf(db, tenantId)).toBe(0);
    expect(await storedItems(db, tenantId)).toEqual([]);
  });

  it("keeps an entry listed again in a later batch of the same file as a duplicate of the first", async () => {
    const tenantId = await givenTenant(db);
    const entries = Array.from({ length: limits.recon.insertBatchItemsMax + 2 }, (_, i) => ({ amount: "1.00", date: "2026-12-01", svcrRef: `D${i}` }));
    entries.push({ amount: "1.00", date: "2026-12-01", svcrRef: "D0" });
    const imported = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: "twice.xml", content: camt053({ id: "ST2", entries }) });
    expect(imported.ok && [imported.value.items, imported.value.duplicates, imported.value.seenBefore]).toEqual([limits.recon.insertBatchItemsMax + 2, 1, 0]);
    const { rows } = await db.pool.query("SELECT duplicate_of FROM recon_external_item WHERE tenant_id = $1 AND duplicate_of IS NOT NULL", [tenantId]);
    expect(rows).toEqual([{ duplicate_of: "svcr:D0" }]);
  });
});
