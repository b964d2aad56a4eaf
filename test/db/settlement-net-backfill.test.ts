import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrate, MIGRATIONS_DIR } from "../../src/db/migrate.ts";
import { createEmptyDatabase, type TestDatabase } from "../support/database.ts";

const FIRST_TEXTS = fileURLToPath(new URL("./migrations-as-first-written/", import.meta.url));

/** The migration files up to `last`, today's or (firstText) 0022 as first written. */
function migrationsUpTo(last: number, firstText = false): string {
  const dir = mkdtempSync(path.join(tmpdir(), "clearline-migrations-"));
  cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  if (firstText) cpSync(path.join(FIRST_TEXTS, "0022_settlement_transfer_net.sql"), path.join(dir, "0022_settlement_transfer_net.sql"));
  for (const file of readdirSync(dir)) if (Number(file.slice(0, 4)) > last) rmSync(path.join(dir, file));
  return dir;
}

/** One transfer of 2 entries from the settlement account, in the statements 0009's trigger wants. */
const transferSql = (key: string) => `
  INSERT INTO transfer (tenant_id, transfer_key, kind, value_date) VALUES ('t', '${key}', 'x', '2026-12-01');
  INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
  VALUES ('t', '${key}:d', '${key}', 'settlement', 'D', 100, 'USD', '2026-12-01'),
         ('t', '${key}:c', '${key}', 'customer', 'C', 100, 'USD', '2026-12-01');`;

/**
 * Migration 0022 nets every settlement transfer, also one posted by a transaction that was open
 * while it ran (docs/decisions/0083). Its first text missed that one: its backfill did not see the
 * uncommitted entries and the trigger that nets them was not yet the one they ran under.
 */
describe("migration 0022 while a posting is in flight", () => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await createEmptyDatabase();
    await migrate(db.pool, migrationsUpTo(21));
    await db.pool.query(`INSERT INTO account (tenant_id, account_id, kind, currency)
                         VALUES ('t', 'settlement', 'settlement', 'USD'), ('t', 'customer', 'customer', 'USD')`);
    await db.pool.query(`BEGIN; ${transferSql("before")} COMMIT;`);
  });
  afterEach(async () => {
    await db.drop();
  });

  async function netsMissingAfterMigrating(firstText: boolean): Promise<number> {
    const poster = await db.pool.connect();
    try {
      await poster.query(`BEGIN; ${transferSql("in-flight")}`);
      const migrating = migrate(db.pool, migrationsUpTo(22, firstText));
      // The posting commits once the migration has ended, or is waiting for it to.
      const waiting = (async () => {
        for (;;) {
          const { rows } = await db.pool.query(
            "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%pg_stat_clear_snapshot%'");
          if (rows.length > 0) return;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      await Promise.race([migrating, waiting]);
      await poster.query("COMMIT");
      await migrating;
    } finally {
      poster.release();
    }
    const { rows } = await db.pool.query<{ missing: number }>(
      `SELECT count(*)::int AS missing
         FROM transfer t
        WHERE NOT EXISTS (SELECT 1 FROM settlement_transfer_net n
                           WHERE n.tenant_id = t.tenant_id AND n.transfer_key = t.transfer_key)`);
    return rows[0]?.missing ?? -1;
  }

  it("nets the transfer that committed after it began", async () => {
    expect(await netsMissingAfterMigrating(false)).toBe(0);
  });

  it("(as first written, it did not)", async () => {
    expect(await netsMissingAfterMigrating(true)).toBe(1);
  });
});
