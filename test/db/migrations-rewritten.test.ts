import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadMigrations, migrate, MIGRATIONS_DIR } from "../../src/db/migrate.ts";
import type { Pool } from "../../src/db/pool.ts";
import { createEmptyDatabase, type TestDatabase } from "../support/database.ts";

/** The first texts of the migrations written again to run while payments flow (decision 0083). */
const FIRST_TEXTS = fileURLToPath(new URL("./migrations-as-first-written/", import.meta.url));

/** Everything a process or a later migration can see of a schema, as sorted lines. */
async function schemaOf(pool: Pool): Promise<string[]> {
  const { rows } = await pool.query<{ line: string }>(`
    SELECT format('column %s.%s %s %s %s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
                  a.attnotnull, pg_get_expr(d.adbin, d.adrelid)) AS line
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE c.relnamespace = 'public'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL
    SELECT format('index %s %s valid=%s', c.relname, pg_get_indexdef(i.indexrelid), i.indisvalid)
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE c.relnamespace = 'public'::regnamespace
    UNION ALL
    SELECT format('constraint %s %s %s valid=%s', conrelid::regclass, conname,
                  pg_get_constraintdef(oid), convalidated)
      FROM pg_constraint WHERE connamespace = 'public'::regnamespace
    UNION ALL
    SELECT format('trigger %s enabled=%s', pg_get_triggerdef(oid), tgenabled)
      FROM pg_trigger WHERE NOT tgisinternal
    UNION ALL
    SELECT format('function %s %s', p.oid::regprocedure, md5(pg_get_functiondef(p.oid)))
      FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
    UNION ALL
    SELECT format('view %s %s', c.relname, pg_get_viewdef(c.oid))
      FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'v'`);
  return rows.map((row) => row.line).sort();
}

/**
 * A database that applied the first texts keeps its record (the files accept its checksums) and
 * reaches the same schema as one that applied the files as they are now.
 */
describe("migrations written again to run while payments flow", () => {
  let now: TestDatabase;
  let before: TestDatabase;
  beforeAll(async () => {
    now = await createEmptyDatabase();
    before = await createEmptyDatabase();
    // The world as it was: the files up to 0029, with the first texts.
    const firstTexts = mkdtempSync(path.join(tmpdir(), "clearline-migrations-"));
    cpSync(MIGRATIONS_DIR, firstTexts, { recursive: true });
    cpSync(FIRST_TEXTS, firstTexts, { recursive: true });
    for (const file of readdirSync(firstTexts)) if (file >= "0030") rmSync(path.join(firstTexts, file));
    await migrate(now.pool);
    await migrate(before.pool, firstTexts);
  });
  afterAll(async () => {
    await now.drop();
    await before.drop();
  });

  it("names each first text's checksum in the file that replaced it", () => {
    const firstTexts = mkdtempSync(path.join(tmpdir(), "clearline-migrations-"));
    cpSync(MIGRATIONS_DIR, firstTexts, { recursive: true });
    cpSync(FIRST_TEXTS, firstTexts, { recursive: true });
    const replaced = new Set(readdirSync(FIRST_TEXTS).map((file) => Number(file.slice(0, 4))));
    const first = loadMigrations(firstTexts).filter((m) => replaced.has(m.version));
    const current = loadMigrations();
    for (const migration of first) {
      const file = current.find((m) => m.version === migration.version);
      expect(file?.acceptedChecksums).toContain(migration.checksum);
    }
  });

  it("applies nothing again where the first texts ran", async () => {
    const report = await migrate(before.pool);
    expect(report.applied).toEqual(loadMigrations().filter((m) => m.version > 29).map(
      (m) => `${String(m.version).padStart(4, "0")}_${m.name}`));
  });

  it("leaves the same schema either way", async () => {
    expect(await schemaOf(before.pool)).toEqual(await schemaOf(now.pool));
  });
});
