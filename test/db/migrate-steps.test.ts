import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createEmptyDatabase, type TestDatabase } from "../support/database.ts";

/** A folder of migration files, NNNN_name.sql -> text. */
function migrationsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "clearline-migrations-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

const TABLE = `CREATE TABLE item (id integer PRIMARY KEY, code text, flag boolean);
INSERT INTO item SELECT g, 'c' || g, NULL FROM generate_series(1, 12000) g;
`;

describe("migrations that run outside a transaction (docs/decisions/0083)", () => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await createEmptyDatabase();
  });
  afterEach(async () => {
    await db.drop();
  });

  it("builds an index CONCURRENTLY, which a transaction refuses", async () => {
    const dir = migrationsDir({
      "0001_item.sql": TABLE,
      "0002_item_code.sql": `-- clearline:no-transaction
-- The index, without a lock that stops writes.
CREATE INDEX CONCURRENTLY IF NOT EXISTS item_code ON item (code);
`,
    });
    const report = await migrate(db.pool, dir);
    expect(report.applied).toEqual(["0001_item", "0002_item_code"]);
    const { rows } = await db.pool.query(
      `SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = 'item_code'::regclass`);
    expect(rows).toEqual([{ indisvalid: true }]);
  });

  it("drops an INVALID index a failed concurrent build left and builds it again", async () => {
    const files = {
      "0001_item.sql": `${TABLE}UPDATE item SET code = 'same' WHERE id <= 2;\n`,
      "0002_item_code.sql": `-- clearline:no-transaction
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS item_code ON item (code);
`,
    };
    const dir = migrationsDir(files);
    await expect(migrate(db.pool, dir)).rejects.toMatchObject({ code: "23505" });
    const left = await db.pool.query(
      `SELECT indisvalid FROM pg_index WHERE indexrelid = 'item_code'::regclass`);
    expect(left.rows).toEqual([{ indisvalid: false }]);   // what IF NOT EXISTS alone would skip
    await db.pool.query("UPDATE item SET code = 'other' WHERE id = 2");
    const report = await migrate(db.pool, dir);
    expect(report.applied).toEqual(["0002_item_code"]);
    const rebuilt = await db.pool.query(
      `SELECT indisvalid FROM pg_index WHERE indexrelid = 'item_code'::regclass`);
    expect(rebuilt.rows).toEqual([{ indisvalid: true }]);
  });

  it("runs a backfill in batches of the named bound, each its own transaction", async () => {
    const dir = migrationsDir({
      "0001_item.sql": TABLE,
      "0002_item_flag.sql": `-- clearline:no-transaction
CREATE TABLE IF NOT EXISTS batch_seen (xact xid8, rows integer);
-- clearline:batch
WITH batch AS (
  SELECT id FROM item
   WHERE id > coalesce(($2::text[])[1]::integer, 0)
   ORDER BY id
   LIMIT $1
), done AS (
  UPDATE item SET flag = true FROM batch WHERE item.id = batch.id RETURNING item.id
), seen AS (
  INSERT INTO batch_seen SELECT pg_current_xact_id(), count(*) FROM done
)
SELECT ARRAY[max(id)::text] AS cursor FROM done HAVING count(*) > 0;
`,
    });
    await migrate(db.pool, dir);
    const { rows } = await db.pool.query(
      "SELECT count(DISTINCT xact)::int AS batches, max(rows) AS most FROM batch_seen");
    const batchRowsMax = limits.db.migrationBatchRowsMax;
    expect(rows[0]).toEqual({ batches: Math.ceil(12000 / batchRowsMax) + 1, most: batchRowsMax });
    const unset = await db.pool.query("SELECT count(*)::int AS n FROM item WHERE flag IS NULL");
    expect(unset.rows[0].n).toBe(0);
  });

  it("accepts an applied migration's earlier checksum that its new text names", async () => {
    const before = "CREATE TABLE item (id integer PRIMARY KEY, code text);\n"
      + "CREATE INDEX item_code ON item (code);\n";
    await migrate(db.pool, migrationsDir({ "0001_item.sql": before }));
    const checksum = createHash("sha256").update(before).digest("hex");
    const after = "-- clearline:no-transaction\n"
      + `-- clearline:accepts-checksum ${checksum}\n`
      + "CREATE TABLE IF NOT EXISTS item (id integer PRIMARY KEY, code text);\n"
      + "CREATE INDEX CONCURRENTLY IF NOT EXISTS item_code ON item (code);\n";
    const report = await migrate(db.pool, migrationsDir({ "0001_item.sql": after }));
    expect(report).toMatchObject({ applied: [], alreadyApplied: 1 });
    const unnamed = "-- clearline:no-transaction\n" + after.split("\n").slice(2).join("\n");
    await expect(migrate(db.pool, migrationsDir({ "0001_item.sql": unnamed })))
      .rejects.toMatchObject({ code: "MIGRATION_CHECKSUM_CHANGED" });
  });

  it("serves a database a newer release migrated further, applying nothing", async () => {
    const older = { "0001_item.sql": TABLE };
    const newer = { ...older, "0002_item_code.sql": "ALTER TABLE item ADD COLUMN note text;\n" };
    await migrate(db.pool, migrationsDir(newer));
    const report = await migrate(db.pool, migrationsDir(older));
    expect(report).toEqual({ applied: [], alreadyApplied: 1, appliedByNewerRelease: 1 });
  });

  it("gives way to a transaction holding the table and tries again, not queueing writers", async () => {
    const dir = migrationsDir({
      "0001_item.sql": TABLE,
      "0002_item_note.sql": "ALTER TABLE item ADD COLUMN note text;\n",
    });
    await migrate(db.pool, migrationsDir({ "0001_item.sql": TABLE }));
    const holder = await db.pool.connect();
    const writer = await db.pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT count(*) FROM item");   // ACCESS SHARE until its COMMIT
      const migrating = migrate(db.pool, dir);
      // While the ALTER waits (and between its attempts) a write is not stuck behind it.
      const slowestWriteMs = await slowestOfWrites(writer, 10);
      await holder.query("COMMIT");
      const report = await migrating;
      expect(report.applied).toEqual(["0002_item_note"]);
      expect(slowestWriteMs).toBeLessThan(limits.db.migrationStatementLockTimeoutMs * 3);
    } finally {
      holder.release();
      writer.release();
    }
  });
});

async function slowestOfWrites(client: { query(sql: string): Promise<unknown> }, count: number) {
  let slowestMs = 0;
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await client.query(`UPDATE item SET code = code WHERE id = ${i + 1}`);
    slowestMs = Math.max(slowestMs, performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return slowestMs;
}
