import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { limits } from "../config/limits.ts";
import type { Pool } from "./pool.ts";

export const MIGRATIONS_DIR = fileURLToPath(new URL("../../migrations/", import.meta.url));

/** Any fixed 64-bit number works; it only has to be the same in every process of ours. */
const MIGRATION_ADVISORY_LOCK = 0x636c_6561_726c_696en; // "clearlin"

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export class MigrationError extends Error {
  constructor(readonly code: "MIGRATION_CHECKSUM_CHANGED" | "MIGRATION_FILE_NAME" | "MIGRATION_MISSING", message: string) {
    super(message);
    this.name = "MigrationError";
  }
}

/** migrations/NNNN_name.sql, in version order. Line endings are normalized before hashing. */
export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir).filter((f) => f.endsWith(".sql")).sort();
  const migrations = files.map((file) => {
    const match = /^(\d{4})_([a-z0-9_]+)\.sql$/.exec(file);
    if (!match) throw new MigrationError("MIGRATION_FILE_NAME", `migration file ${file} is not named NNNN_name.sql`);
    const sql = readFileSync(path.join(dir, file), "utf8").replace(/\r\n/g, "\n");
    return { version: Number(match[1]), name: match[2] ?? "", sql, checksum: createHash("sha256").update(sql).digest("hex") };
  });
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new MigrationError("MIGRATION_MISSING", `migration versions must run 1, 2, 3...: found ${m.version} at position ${i + 1}`);
  });
  return migrations;
}

export interface MigrationReport {
  applied: string[];
  alreadyApplied: number;
}

/**
 * Applies each migration exactly once, in order, each in its own transaction together with its
 * record in `schema_migration`. A session-level advisory lock makes a second process wait
 * rather than race. A migration whose file changed after it was applied is a hard error: the
 * database no longer matches what the code believes it ran.
 */
export async function migrate(pool: Pool, dir = MIGRATIONS_DIR): Promise<MigrationReport> {
  const migrations = loadMigrations(dir);
  const client = await pool.connect();
  try {
    await client.query(`SET lock_timeout = ${limits.db.migrationLockTimeoutMs}`);
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_ADVISORY_LOCK.toString()]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migration (
        version     integer PRIMARY KEY,
        name        text NOT NULL,
        checksum    text NOT NULL,
        applied_at  timestamptz NOT NULL DEFAULT now()
      )`);
      const { rows } = await client.query<{ version: number; name: string; checksum: string }>("SELECT version, name, checksum FROM schema_migration ORDER BY version");
      const applied = new Map(rows.map((r) => [r.version, r]));
      for (const row of rows) {
        const migration = migrations.find((m) => m.version === row.version);
        if (!migration) throw new MigrationError("MIGRATION_MISSING", `migration ${row.version} (${row.name}) is applied but its file is gone`);
        if (migration.checksum !== row.checksum) {
          throw new MigrationError("MIGRATION_CHECKSUM_CHANGED", `migration ${row.version} (${row.name}) was changed after it was applied: checksum ${row.checksum.slice(0, 12)} in the database, ${migration.checksum.slice(0, 12)} on disk`);
        }
      }
      const report: MigrationReport = { applied: [], alreadyApplied: applied.size };
      for (const migration of migrations) {
        if (applied.has(migration.version)) continue;
        await client.query("BEGIN");
        try {
          await client.query(migration.sql);
          await client.query("INSERT INTO schema_migration (version, name, checksum) VALUES ($1, $2, $3)", [migration.version, migration.name, migration.checksum]);
          await client.query("COMMIT");
        } catch (error) {
          await client.query("ROLLBACK");
          throw error;
        }
        report.applied.push(`${String(migration.version).padStart(4, "0")}_${migration.name}`);
      }
      return report;
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_ADVISORY_LOCK.toString()]);
      await client.query("RESET lock_timeout"); // the client goes back to a shared pool
    }
  } finally {
    client.release();
  }
}

/** Migration files not yet recorded in schema_migration (all of them when the table is missing). */
export async function pendingMigrations(pool: Pool, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = loadMigrations(dir);
  const { rows } = await pool.query<{ versions: number[] | null }>(
    "SELECT CASE WHEN to_regclass('schema_migration') IS NULL THEN NULL ELSE (SELECT coalesce(array_agg(version), '{}') FROM schema_migration) END AS versions",
  );
  const applied = new Set(rows[0]?.versions ?? []);
  return migrations.filter((m) => !applied.has(m.version)).map((m) => `${String(m.version).padStart(4, "0")}_${m.name}`);
}
