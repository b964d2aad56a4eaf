import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import { assert } from "../assert.ts";
import { limits } from "../config/limits.ts";
import type { Pool } from "./pool.ts";
import { splitSqlStatements, withoutComments, type SqlStatement } from "./sql-statements.ts";

export const MIGRATIONS_DIR = fileURLToPath(new URL("../../migrations/", import.meta.url));

/** Any fixed 64-bit number works; it only has to be the same in every process of ours. */
const MIGRATION_ADVISORY_LOCK = 0x636c_6561_726c_696en; // "clearlin"

/** PostgreSQL's lock_not_available: a statement's lock_timeout ran out. */
const LOCK_NOT_AVAILABLE = "55P03";

/**
 * A migration file's header says how it runs (docs/decisions/0083):
 * - `-- clearline:no-transaction`: statement by statement, each committed on its own, so that an
 *   index is built CONCURRENTLY and a backfill commits batch by batch. Every statement is written
 *   to be run again (IF NOT EXISTS, ON CONFLICT DO NOTHING): a failed run starts over.
 * - `-- clearline:accepts-checksum <sha256>`: a checksum of this file's earlier text, applied on
 *   databases that still record it. Only a change of *how* a migration runs, never of the schema
 *   it leaves, may be accepted so (a test builds both and compares).
 * In a no-transaction file, a statement under `-- clearline:batch` is a backfill batch: it gets
 * $1 = limits.db.migrationBatchRowsMax and $2 = the cursor (text[], NULL at first) and returns at
 * most one row with a column `cursor`; it runs again from that cursor until it returns no row.
 */
const FILE_DIRECTIVES = ["no-transaction", "accepts-checksum"] as const;
const STATEMENT_DIRECTIVES = ["batch"] as const;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
  transactional: boolean;
  acceptedChecksums: string[];
}

export type MigrationErrorCode =
  | "MIGRATION_CHECKSUM_CHANGED" | "MIGRATION_FILE_NAME" | "MIGRATION_MISSING"
  | "MIGRATION_DIRECTIVE" | "MIGRATION_LOCK_ATTEMPTS";

function fileStem(migration: Migration): string {
  return `${String(migration.version).padStart(4, "0")}_${migration.name}`;
}

export class MigrationError extends Error {
  constructor(readonly code: MigrationErrorCode, message: string) {
    super(message);
    this.name = "MigrationError";
  }
}

/** migrations/NNNN_name.sql, in version order. Line endings are normalized before hashing. */
export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir).filter((f) => f.endsWith(".sql")).sort();
  const migrations = files.map((file) => {
    const match = /^(\d{4})_([a-z0-9_]+)\.sql$/.exec(file);
    if (!match) {
      throw new MigrationError("MIGRATION_FILE_NAME",
        `migration file ${file} is not named NNNN_name.sql`);
    }
    const sql = readFileSync(path.join(dir, file), "utf8").replace(/\r\n/g, "\n");
    const checksum = createHash("sha256").update(sql).digest("hex");
    const version = Number(match[1]);
    return { version, name: match[2] ?? "", sql, checksum, ...directives(file, sql) };
  });
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) {
      throw new MigrationError("MIGRATION_MISSING",
        `migration versions must run 1, 2, 3...: found ${m.version} at position ${i + 1}`);
    }
  });
  return migrations;
}

type Directives = Pick<Migration, "transactional" | "acceptedChecksums">;

function directives(file: string, sql: string): Directives {
  let transactional = true;
  const acceptedChecksums: string[] = [];
  for (const [, name, argument] of sql.matchAll(/^--\s*clearline:([a-z-]+)[ \t]*(.*)$/gm)) {
    const known = [...FILE_DIRECTIVES, ...STATEMENT_DIRECTIVES] as readonly string[];
    if (!known.includes(name ?? "")) {
      throw new MigrationError("MIGRATION_DIRECTIVE",
        `${file}: unknown directive clearline:${name}`);
    }
    if (name === "no-transaction") transactional = false;
    if (name === "accepts-checksum") {
      if (!/^[0-9a-f]{64}$/.test(argument?.trim() ?? "")) {
        throw new MigrationError("MIGRATION_DIRECTIVE",
          `${file}: clearline:accepts-checksum needs a sha256 in hex`);
      }
      acceptedChecksums.push(argument?.trim() ?? "");
    }
    if (name === "batch" && transactional) {
      throw new MigrationError("MIGRATION_DIRECTIVE",
        `${file}: clearline:batch needs clearline:no-transaction before it`);
    }
  }
  return { transactional, acceptedChecksums };
}

export interface MigrationReport {
  applied: string[];
  alreadyApplied: number;
  /** Versions past this release's last file, applied by a newer release (docs/decisions/0083). */
  appliedByNewerRelease: number;
}

interface AppliedRow { version: number; name: string; checksum: string }

/**
 * Applies each migration exactly once, in order, with its record in `schema_migration`: a
 * transactional one in one transaction with its record, a no-transaction one statement by
 * statement and recorded after its last. A session-level advisory lock makes a second process
 * wait rather than race. A migration whose file changed after it was applied is a hard error
 * (the database no longer matches what the code believes it ran), unless the file accepts the
 * recorded checksum. Versions past the last file are a newer release's: this release's schema
 * is still served by them (expand, then contract), so they are counted, not refused.
 */
export async function migrate(pool: Pool, dir = MIGRATIONS_DIR): Promise<MigrationReport> {
  const migrations = loadMigrations(dir);
  const client = await pool.connect();
  try {
    await client.query(`SET lock_timeout = ${limits.db.migrationLockTimeoutMs}`);
    await client.query(`SET statement_timeout = ${limits.db.migrationStatementTimeoutMs}`);
    await takeMigrationLock(client);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migration (
        version     integer PRIMARY KEY,
        name        text NOT NULL,
        checksum    text NOT NULL,
        applied_at  timestamptz NOT NULL DEFAULT now()
      )`);
      const { rows } = await client.query<AppliedRow>(
        "SELECT version, name, checksum FROM schema_migration ORDER BY version");
      const newer = checkApplied(rows, migrations);
      const applied = new Set(rows.map((r) => r.version));
      const report: MigrationReport = {
        applied: [], alreadyApplied: applied.size - newer, appliedByNewerRelease: newer,
      };
      for (const migration of migrations) {
        if (applied.has(migration.version)) continue;
        await applyWithRetries(client, migration);
        report.applied.push(fileStem(migration));
      }
      return report;
    } finally {
      await client.query(`SET lock_timeout = ${limits.db.migrationLockTimeoutMs}`);
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_ADVISORY_LOCK.toString()]);
      await client.query("RESET lock_timeout"); // the client goes back to a shared pool
      await client.query("RESET statement_timeout");
    }
  } finally {
    client.release();
  }
}

/**
 * The advisory lock, asked for again and again rather than waited for in one statement: a
 * statement waiting for it is an old transaction in the eyes of the migration that holds it, and
 * a CONCURRENTLY build (or 0022's wait) would wait for it in turn.
 */
async function takeMigrationLock(client: pg.PoolClient): Promise<void> {
  const started = performance.now();
  for (;;) {
    const { rows } = await client.query<{ taken: boolean }>(
      "SELECT pg_try_advisory_lock($1) AS taken", [MIGRATION_ADVISORY_LOCK.toString()]);
    if (rows[0]?.taken === true) return;
    if (performance.now() - started > limits.db.migrationLockTimeoutMs) {
      throw new MigrationError("MIGRATION_LOCK_ATTEMPTS",
        `another process held the migration lock for ${limits.db.migrationLockTimeoutMs} ms`);
    }
    await sleep(limits.db.migrationLockRetryMs);
  }
}

/** Refuses a changed or missing file; returns how many recorded versions a newer release added. */
function checkApplied(rows: AppliedRow[], migrations: Migration[]): number {
  const last = migrations.at(-1)?.version ?? 0;
  let newer = 0;
  for (const row of rows) {
    const migration = migrations.find((m) => m.version === row.version);
    if (!migration && row.version > last) {
      newer += 1;
      continue;
    }
    const which = `migration ${row.version} (${row.name})`;
    if (!migration) {
      throw new MigrationError("MIGRATION_MISSING", `${which} is applied but its file is gone`);
    }
    const accepted = migration.acceptedChecksums.includes(row.checksum);
    if (migration.checksum !== row.checksum && !accepted) {
      throw new MigrationError("MIGRATION_CHECKSUM_CHANGED",
        `${which} was changed after it was applied: checksum ${row.checksum.slice(0, 12)} `
        + `in the database, ${migration.checksum.slice(0, 12)} on disk`);
    }
  }
  const recorded = new Set(rows.map((r) => r.version));
  const gap = migrations.find((m) => !recorded.has(m.version));
  if (newer > 0 && gap) {
    throw new MigrationError("MIGRATION_MISSING", `a newer release migrated this database, `
      + `but migration ${gap.version} (${gap.name}) of this release is not applied`);
  }
  return newer;
}

/**
 * One migration, tried again when a statement's short lock wait ran out: a waiting ALTER makes
 * every later payment on its table wait behind it, so it gives way and tries again later.
 */
async function applyWithRetries(client: pg.PoolClient, migration: Migration): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    await client.query(`SET lock_timeout = ${limits.db.migrationStatementLockTimeoutMs}`);
    try {
      if (migration.transactional) await applyInTransaction(client, migration);
      else await applyStepwise(client, migration);
      return;
    } catch (error) {
      await client.query("ROLLBACK"); // a warning only when no transaction is open
      const code = (error as { code?: unknown }).code;
      if (code !== LOCK_NOT_AVAILABLE) throw error;
      if (attempt >= limits.db.migrationLockAttemptsMax) {
        throw new MigrationError("MIGRATION_LOCK_ATTEMPTS",
          `migration ${migration.version} (${migration.name}) did not get its locks in `
          + `${attempt} attempts of ${limits.db.migrationStatementLockTimeoutMs} ms`);
      }
      await sleep(limits.db.migrationLockRetryMs);
    }
  }
}

async function applyInTransaction(client: pg.PoolClient, migration: Migration): Promise<void> {
  await client.query("BEGIN");
  await client.query(migration.sql);
  await record(client, migration);
  await client.query("COMMIT");
}

function record(client: pg.PoolClient, migration: Migration) {
  return client.query(
    "INSERT INTO schema_migration (version, name, checksum) VALUES ($1, $2, $3)",
    [migration.version, migration.name, migration.checksum]);
}

/** A no-transaction migration: each statement commits on its own (BEGIN ... COMMIT may group). */
async function applyStepwise(client: pg.PoolClient, migration: Migration): Promise<void> {
  for (const statement of splitSqlStatements(migration.sql)) {
    if (/^--\s*clearline:batch\b/m.test(statement.text)) {
      await runBatches(client, migration, statement);
      continue;
    }
    const index = concurrentIndexName(statement.text);
    if (index === undefined) {
      await client.query(statement.text);
      continue;
    }
    // CONCURRENTLY waits for older transactions, not for a lock a payment needs: no short bound.
    await client.query(`SET lock_timeout = ${limits.db.migrationLockTimeoutMs}`);
    await dropInvalidIndex(client, index);
    await client.query(statement.text);
    await client.query(`SET lock_timeout = ${limits.db.migrationStatementLockTimeoutMs}`);
  }
  await record(client, migration);
}

/** The index a `CREATE [UNIQUE] INDEX CONCURRENTLY [IF NOT EXISTS] name` builds, else undefined. */
export function concurrentIndexName(text: string): string | undefined {
  const pattern =
    /^\s*CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)/i;
  return pattern.exec(withoutComments(text))?.[1]?.toLowerCase();
}

/**
 * A concurrent build that failed (a unique violation, a cancel, a lost connection) leaves its
 * index INVALID: never used by a query, still kept up by every write, and skipped by IF NOT
 * EXISTS. It is dropped, concurrently, so the build runs again.
 */
async function dropInvalidIndex(client: pg.PoolClient, index: string): Promise<void> {
  const { rows } = await client.query(
    `SELECT 1
       FROM pg_index i
       JOIN pg_class c ON c.oid = i.indexrelid
      WHERE c.relname = $1
        AND c.relnamespace = current_schema()::regnamespace
        AND NOT i.indisvalid`, [index]);
  if (rows.length > 0) await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${index}`);
}

/** A backfill: the statement again from its cursor, each batch its own transaction. */
async function runBatches(
  client: pg.PoolClient, migration: Migration, statement: SqlStatement,
): Promise<void> {
  let cursor: string[] | null = null;
  for (;;) {
    const result: pg.QueryResult<{ cursor: string[] | null }> = await client.query(
      statement.text, [limits.db.migrationBatchRowsMax, cursor]);
    const rows = result.rows;
    const where = `migration ${migration.version} line ${statement.line}`;
    assert(rows.length <= 1, `${where}: a batch returns at most one row`);
    const next: string[] | null = rows[0]?.cursor ?? null;
    if (next === null) return;
    const moved = JSON.stringify(next) !== JSON.stringify(cursor);
    assert(moved, `${where}: a batch must move its cursor`);
    cursor = next;
  }
}

/** Migration files not yet recorded in schema_migration (all of them when the table is missing). */
export async function pendingMigrations(pool: Pool, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = loadMigrations(dir);
  const { rows } = await pool.query<{ versions: number[] | null }>(
    `SELECT CASE WHEN to_regclass('schema_migration') IS NULL THEN NULL
                 ELSE (SELECT coalesce(array_agg(version), '{}') FROM schema_migration)
            END AS versions`);
  const applied = new Set(rows[0]?.versions ?? []);
  return migrations.filter((m) => !applied.has(m.version)).map(fileStem);
}
