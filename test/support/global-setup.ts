import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../../src/db/embedded.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createPool } from "../../src/db/pool.ts";
import { urlWithDatabase } from "../../src/db/url.ts";

declare module "vitest" {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
  }
}

/**
 * One PostgreSQL for the whole run: the server at DATABASE_URL when set (CI's stock server),
 * else a real embedded one in a temporary folder. One migrated template database; every test
 * file clones its own database from it (test/support/database.ts) and drops it afterwards.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Tests run the real `clearline` command, which is compiled: build it from the sources under
  // test, so no test ever runs a build older than the code beside it.
  execFileSync("npm", ["run", "-s", "build"], { stdio: "inherit" });
  let embedded: EmbeddedDatabase | undefined;
  let home: string | undefined;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    home = mkdtempSync(path.join(tmpdir(), "clearline-test-pg-"));
    embedded = await startEmbeddedPostgres(home, { persistent: false });
    adminUrl = embedded.url;
  }
  const templateDatabase = `clearline_tmpl_${randomBytes(5).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${templateDatabase}`);
  const templatePool = createPool(urlWithDatabase(adminUrl, templateDatabase), { max: 2 });
  await migrate(templatePool);
  await templatePool.end();

  project.provide("adminDatabaseUrl", adminUrl);
  project.provide("templateDatabase", templateDatabase);

  return async () => {
    // Databases of test files that crashed before their own cleanup are dropped here too.
    const { rows } = await admin.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2",
      [templateDatabase, `${templateDatabase.replace("tmpl", "t")}%`],
    );
    for (const row of rows) await admin.query(`DROP DATABASE IF EXISTS ${row.datname} WITH (FORCE)`);
    await admin.end();
    if (embedded) await embedded.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  };
}
