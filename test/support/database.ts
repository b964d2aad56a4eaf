import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import pg from "pg";
import { inject } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.ts";
import { urlWithDatabase } from "../../src/db/url.ts";

export interface TestDatabase {
  pool: Pool;
  url: string;
  name: string;
  /** For a test that damages the ledger on purpose: the arbiter stops verifying this database. */
  markTampered(): void;
  drop(): Promise<void>;
}

/**
 * Migrated test databases still open in this file: test/support/ledger-arbiter.ts runs
 * `clearline ledger verify`'s check on each of them after every test.
 */
export const openLedgerDatabases = new Set<TestDatabase>();

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject("adminDatabaseUrl") });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function newDatabase(suffix: string, createSql: (name: string) => string, poolMax: number, verified: boolean): Promise<TestDatabase> {
  // Named after the run's template so the global teardown drops whatever a crashed file left.
  const name = `${inject("templateDatabase").replace("tmpl", "t")}_${suffix}${randomBytes(4).toString("hex")}`;
  await admin((client) => client.query(createSql(name)));
  const url = urlWithDatabase(inject("adminDatabaseUrl"), name);
  const pool = createPool(url, { max: poolMax });
  const database: TestDatabase = {
    pool, url, name,
    markTampered() {
      openLedgerDatabases.delete(database);
    },
    async drop() {
      openLedgerDatabases.delete(database);
      await pool.end();
      await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
  if (verified) openLedgerDatabases.add(database);
  return database;
}

/** A fresh database cloned from the migrated template: each test file gets its own. */
export function createTestDatabase(options: { poolMax?: number } = {}): Promise<TestDatabase> {
  return newDatabase("", (name) => `CREATE DATABASE ${name} TEMPLATE ${inject("templateDatabase")}`, options.poolMax ?? 10, true);
}

/** A fresh, empty database (not migrated): for testing the migration runner itself. */
export function createEmptyDatabase(): Promise<TestDatabase> {
  return newDatabase("e", (name) => `CREATE DATABASE ${name}`, 4, false);
}

/**
 * The SQL of an applied migration (`migrations/<file>`) as it would run on today's schema: the
 * tables later migrations renamed (`ALTER TABLE a RENAME TO b`) carry their new names. For a test
 * that runs an old backfill again over rows it made look old.
 */
export function migrationSqlOnTodaysTables(file: string): string {
  const dir = new URL("../../migrations/", import.meta.url);
  const renames = readdirSync(dir).filter((name) => name.endsWith(".sql") && name > file)
    .flatMap((name) => [...readFileSync(new URL(name, dir), "utf8")
      .matchAll(/ALTER TABLE (\w+) RENAME TO (\w+);/g)]);
  let sql = readFileSync(new URL(file, dir), "utf8");
  for (const [, from, to] of renames) sql = sql.replace(new RegExp(`\\b${from}\\b`, "g"), to ?? "");
  return sql;
}
