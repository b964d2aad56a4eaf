import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../../src/db/embedded.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createPool, type Pool } from "../../src/db/pool.ts";
import { urlWithDatabase } from "../../src/db/url.ts";

/** The simulation's own connections are named, so that the service's can be told apart in pg_stat_activity. */
export const simApplicationName = "clearline-sim";

export interface SimDatabase {
  url: string;          // the fresh database the service and the checks use
  name: string;
  pool: Pool;
  source: string;       // where PostgreSQL came from, for the report
  drop(): Promise<void>;
}

/**
 * A fresh, migrated database for one run: on the server at `adminUrl` (else DATABASE_URL), else
 * on an embedded PostgreSQL started in a temporary folder. Neither available is an error, never
 * a silent pass.
 */
export async function createSimDatabase(adminUrl = process.env.DATABASE_URL): Promise<SimDatabase> {
  let embedded: EmbeddedDatabase | undefined;
  let home: string | undefined;
  let source = `DATABASE_URL server`;
  if (!adminUrl) {
    home = mkdtempSync(path.join(tmpdir(), "clearline-sim-pg-"));
    try {
      embedded = await startEmbeddedPostgres(home, { persistent: false });
    } catch (error) {
      rmSync(home, { recursive: true, force: true });
      throw new Error(`SIMULATION CANNOT RUN: no DATABASE_URL and the embedded PostgreSQL did not start: ${(error as Error).message}`);
    }
    adminUrl = embedded.url;
    source = "embedded PostgreSQL";
  }
  const name = `clearline_sim_${randomBytes(5).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  try {
    await admin.connect();
    // LOCALE 'C': text sorts by bytes, so the invariants can read a key's transfers as an index
    // range (invariants.ts, achEffectivePostingsOf), whatever the server's default locale.
    await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'`);
  } catch (error) {
    throw new Error(`SIMULATION CANNOT RUN: PostgreSQL at the ${source} refused: ${(error as Error).message}`);
  } finally {
    await admin.end().catch(() => undefined);
  }
  const url = urlWithDatabase(adminUrl, name);
  const pool = createPool(url, { max: 8, applicationName: simApplicationName });
  await migrate(pool);
  const admin2 = adminUrl;
  return {
    url, name, pool, source,
    async drop() {
      await pool.end();
      const client = new pg.Client({ connectionString: admin2 });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
      if (embedded) await embedded.stop();
      if (home) rmSync(home, { recursive: true, force: true });
    },
  };
}
