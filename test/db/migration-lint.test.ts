import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MIGRATIONS_DIR } from "../../src/db/migrate.ts";
import { lintMigration } from "./migration-lint.ts";

/**
 * Migrations applied before the oldest release a serving fleet upgrades from (5e524a4, whose last
 * migration is 0021; bench/rolling-upgrade.bench.ts): every database upgraded while it serves
 * has applied them, and on a new database their tables are empty. Reasoned, and only shrinks.
 */
const BEFORE_ROLLING_UPGRADES = 21;

describe("migrations do nothing that stops payments on a large table (docs/decisions/0083)", () => {
  it("holds for every migration from 0022 on", () => {
    const findings = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith(".sql"))
      .filter((f) => Number(f.slice(0, 4)) > BEFORE_ROLLING_UPGRADES)
      .flatMap((f) => lintMigration(f, readFileSync(path.join(MIGRATIONS_DIR, f), "utf8")));
    expect(findings).toEqual([]);
  });

  it("finds what it looks for in the migrations before", () => {
    const findings = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith(".sql"))
      .filter((f) => Number(f.slice(0, 4)) <= BEFORE_ROLLING_UPGRADES)
      .flatMap((f) => lintMigration(f, readFileSync(path.join(MIGRATIONS_DIR, f), "utf8")));
    expect(findings.length).toBeGreaterThan(0);
  });

  const bad: Array<[string, string]> = [
    ["index without CONCURRENTLY", "CREATE INDEX payment_x ON payment (tenant_id, status);"],
    ["CONCURRENTLY needs", "CREATE INDEX CONCURRENTLY payment_x ON payment (status);"],
    ["CONCURRENTLY needs", "-- clearline:no-transaction\nCREATE INDEX CONCURRENTLY payment_x ON payment (status);"],
    ["volatile default", "ALTER TABLE ledger_entry ADD COLUMN uid uuid DEFAULT gen_random_uuid();"],
    ["volatile default", "ALTER TABLE payment ADD COLUMN note text CHECK (length(note) < 10);"],
    ["volatile default", "ALTER TABLE payment ALTER COLUMN description TYPE varchar(100);"],
    ["constraint without NOT VALID", "ALTER TABLE refund ADD CONSTRAINT r CHECK (amount_minor < 10);"],
    ["SET NOT NULL", "ALTER TABLE payment ALTER COLUMN description SET NOT NULL;"],
    ["backfill not in batches", "UPDATE payment SET description = '' WHERE description IS NULL;"],
    ["backfill not in batches", "INSERT INTO x (a) SELECT entry_key FROM ledger_entry;"],
    ["rename without the old name", "ALTER TABLE payment RENAME TO http_payment;"],
    ["takes the table whole", "LOCK TABLE ledger_entry IN EXCLUSIVE MODE;"],
  ];
  it.each(bad)("names %s in a migration that does it", (rule, sql) => {
    const findings = lintMigration("9999_bad.sql", sql);
    expect(findings.map((f) => f.rule).join("\n")).toContain(rule);
  });

  const good: string[] = [
    "-- clearline:no-transaction\nCREATE INDEX CONCURRENTLY IF NOT EXISTS p ON payment (status);",
    "CREATE TABLE t (a int);\nCREATE INDEX t_a ON t (a);",
    "ALTER TABLE payment ADD COLUMN note text;",
    "ALTER TABLE payment ADD COLUMN n int NOT NULL DEFAULT 0;",
    "ALTER TABLE refund ADD CONSTRAINT r CHECK (amount_minor < 10) NOT VALID;",
    "-- clearline:no-transaction\n-- clearline:batch\nUPDATE payment SET description = '' WHERE false;",
    "ALTER TABLE payment RENAME TO http_payment;\nCREATE VIEW payment AS SELECT * FROM http_payment;",
  ];
  it.each(good)("lets %s pass", (sql) => {
    expect(lintMigration("9999_good.sql", sql)).toEqual([]);
  });
});
