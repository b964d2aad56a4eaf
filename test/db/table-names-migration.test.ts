import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate, MIGRATIONS_DIR } from "../../src/db/migrate.ts";
import { createEmptyDatabase, type TestDatabase } from "../support/database.ts";

/**
 * Migration 0028 renames the record tables and the received files' tables (docs/decisions/0068):
 * a database migrated before it keeps its rows, under the new names, and no object keeps an
 * ingest_ name.
 */
describe("migration 0028: tables named for what they hold", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createEmptyDatabase();
    const before = mkdtempSync(path.join(tmpdir(), "clearline-migrations-"));
    cpSync(MIGRATIONS_DIR, before, { recursive: true });
    for (const file of readdirSync(before)) if (file >= "0028") rmSync(path.join(before, file));
    await migrate(db.pool, before);
    await db.pool.query(`INSERT INTO partner (tenant_id, partner_id, name, currency)
                         VALUES ('t1', 'prt_1', 'bank', 'USD')`);
    await db.pool.query(
      `INSERT INTO ingest_file (tenant_id, file_id, partner_id, source, original_name, size_bytes,
                                bytes_sha256, status)
       VALUES ('t1', 'fil_1', 'prt_1', 'cli', 'a.ach', 0, '', 'done')`);
    await db.pool.query(
      `INSERT INTO ingest_record_key (tenant_id, natural_key, fingerprint, channel, kind, state,
                                      position, amount_minor, currency, value_date)
       VALUES ('t1', 'ach:1', 'fp', 'ach', 'credit', 'applied', 'line 3', 100, 'USD',
               '2025-01-02')`);
    await migrate(db.pool);
  });
  afterAll(async () => {
    await db.drop();
  });

  it("keeps the rows written before it under the new names", async () => {
    const files = await db.pool.query("SELECT file_id, original_name FROM received_file");
    const keys = await db.pool.query("SELECT natural_key, state FROM record_key");
    expect(files.rows).toEqual([{ file_id: "fil_1", original_name: "a.ach" }]);
    expect(keys.rows).toEqual([{ natural_key: "ach:1", state: "applied" }]);
  });

  it("leaves no table, index or constraint named ingest_, but the old names' views", async () => {
    const { rows } = await db.pool.query<{ name: string }>(
      `SELECT relname AS name FROM pg_class
        WHERE relnamespace = 'public'::regnamespace AND relname LIKE 'ingest%' AND relkind <> 'v'
       UNION ALL
       SELECT conname FROM pg_constraint
        WHERE connamespace = 'public'::regnamespace AND conname LIKE 'ingest%'`);
    expect(rows).toEqual([]);
  });
});

/**
 * Expand, then contract (docs/decisions/0083): a process of the release before 0028 writes and
 * reads the old names while a fleet is upgraded; the views carry it to the renamed tables.
 */
describe("the old table names after migration 0028", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createEmptyDatabase();
    await migrate(db.pool);
  });
  afterAll(async () => {
    await db.drop();
  });

  it("take a write with ON CONFLICT and a locking read, as the old process made them", async () => {
    const insert = `INSERT INTO ingest_record_key (tenant_id, natural_key, fingerprint, channel, kind,
                                                  state, position, amount_minor, currency, value_date)
                    VALUES ('t1', 'ach:1', $1, 'ach', 'credit', 'applied', 'line 3', 100, 'USD',
                            '2025-01-02')
                    ON CONFLICT (tenant_id, natural_key) DO NOTHING
                    RETURNING natural_key`;
    expect((await db.pool.query(insert, ["fp"])).rows).toEqual([{ natural_key: "ach:1" }]);
    expect((await db.pool.query(insert, ["fp"])).rows).toEqual([]);
    const locked = await db.pool.query(
      "SELECT state FROM ingest_record_key WHERE tenant_id = 't1' FOR UPDATE");
    expect(locked.rows).toEqual([{ state: "applied" }]);
    const renamed = await db.pool.query("SELECT natural_key FROM record_key");
    expect(renamed.rows).toEqual([{ natural_key: "ach:1" }]);
  });
});
