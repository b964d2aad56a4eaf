import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { startEmbeddedPostgres } from "../../src/db/embedded.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createPool, type Pool } from "../../src/db/pool.ts";
import { urlWithDatabase } from "../../src/db/url.ts";

export interface BenchDatabase {
  pool: Pool;
  url: string;
  close(): Promise<void>;
}

/**
 * A fresh, migrated database for one benchmark run: a temporary database on `serverUrl`'s server
 * when given (the HA cluster), else on DATABASE_URL's when set, else on a temporary embedded
 * PostgreSQL. Removed afterwards.
 */
export async function benchDatabase(poolMax = 20, serverUrl?: string): Promise<BenchDatabase> {
  let adminUrl = serverUrl ?? process.env.DATABASE_URL;
  let home: string | undefined;
  let stopEmbedded = async () => undefined as void;
  if (!adminUrl) {
    home = mkdtempSync(path.join(tmpdir(), "clearline-bench-pg-"));
    const embedded = await startEmbeddedPostgres(home, { persistent: false });
    adminUrl = embedded.url;
    stopEmbedded = embedded.stop;
  }
  const name = `clearline_bench_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = urlWithDatabase(adminUrl, name);
  const pool = createPool(url, { max: poolMax });
  await migrate(pool);
  return {
    pool,
    url,
    async close() {
      await pool.end();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
      await stopEmbedded();
      if (home) rmSync(home, { recursive: true, force: true });
    },
  };
}

/** The server's settings that move these figures, for a benchmark's notes (issue 29 item 8). */
export async function serverSettings(pool: Pool): Promise<string> {
  const names = ["server_version", "shared_buffers", "max_wal_size", "wal_compression", "autovacuum"];
  const { rows } = await pool.query<{ name: string; setting: string }>(
    "SELECT name, current_setting(name) AS setting FROM unnest($1::text[]) AS name", [names]);
  return `PostgreSQL settings: ${rows.map((r) => `${r.name}=${r.setting}`).join(", ")}`;
}
