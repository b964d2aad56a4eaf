import { mkdtempSync, readFileSync, writeFileSync, cpSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrate, MIGRATIONS_DIR } from "../../src/db/migrate.ts";
import { createEmptyDatabase, type TestDatabase } from "../support/database.ts";

describe("migrations", () => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await createEmptyDatabase();
  });
  afterEach(async () => {
    await db.drop();
  });

  it("applies every migration once and records it with a checksum", async () => {
    const first = await migrate(db.pool);
    expect(first.applied.length).toBeGreaterThan(0);
    const { rows } = await db.pool.query("SELECT version, checksum FROM schema_migration ORDER BY version");
    expect(rows.map((r) => r.version)).toEqual(first.applied.map((_, i) => i + 1));
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.checksum))).toBe(true);
  });

  it("applies nothing the second time", async () => {
    const first = await migrate(db.pool);
    const second = await migrate(db.pool);
    expect(second.applied).toEqual([]);
    expect(second.alreadyApplied).toBe(first.applied.length);
  });

  it("lets two processes migrate at once without either applying a migration twice", async () => {
    const [a, b] = await Promise.all([migrate(db.pool), migrate(db.pool)]);
    const total = a.applied.length + b.applied.length;
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM schema_migration");
    expect(total).toBe(rows[0].n);
  });

  it("refuses to run when an applied migration's file has changed", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "clearline-migrations-"));
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    await migrate(db.pool, dir);
    const first = path.join(dir, "0001_ledger.sql");
    writeFileSync(first, readFileSync(first, "utf8") + "\n-- edited after it was applied\n");
    await expect(migrate(db.pool, dir)).rejects.toMatchObject({ code: "MIGRATION_CHECKSUM_CHANGED" });
  });
});
