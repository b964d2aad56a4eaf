import { loadConfig, setProcessConfig, type Config, type ConfigOverrides } from "../config/config.ts";
import { openDatabase, type Database } from "../db/database.ts";
import { migrate } from "../db/migrate.ts";
import { assertSessionConnections } from "../db/session-check.ts";
import type { Queryable } from "../db/pool.ts";
import { findTenant, type Tenant } from "../tenants/tenants.ts";
import { CliError, exitCodes } from "./exit-codes.ts";

export function configOrExit(overrides: ConfigOverrides = {}): Config {
  const loaded = loadConfig(process.env, overrides);
  if (!loaded.ok) throw new CliError(`configuration: ${loaded.errors.map((e) => e.message).join("; ")}`, exitCodes.usage);
  setProcessConfig(loaded.value);
  return loaded.value;
}

/** Opens the configured database (embedded unless DATABASE_URL is set), migrated, for one command. */
export async function withDatabase<T>(work: (db: Database, config: Config) => Promise<T>, options: { migrate?: boolean } = {}): Promise<T> {
  const config = configOrExit();
  const db = await openDatabase(config.databaseUrl ? { databaseUrl: config.databaseUrl, home: config.home, poolMax: 4 } : { home: config.home, poolMax: 4 });
  try {
    await assertSessionConnections(db.pool);
    if (options.migrate !== false) await migrate(db.pool);
    return await work(db, config);
  } finally {
    await db.close();
  }
}

/** `--tenant` takes a tenant's name or id everywhere. */
export async function tenantOrExit(db: Queryable, idOrName: string): Promise<Tenant> {
  const tenant = await findTenant(db, idOrName);
  if (!tenant) throw new CliError(`TENANT_UNKNOWN: no tenant ${idOrName} (clearline tenant add NAME)`, exitCodes.usage);
  return tenant;
}
