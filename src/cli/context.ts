import { loadConfig, type Config, type ConfigOverrides } from "../config/config.ts";
import { openDatabase, type Database } from "../db/database.ts";
import { migrate } from "../db/migrate.ts";
import { CliError, exitCodes } from "./exit-codes.ts";

export function configOrExit(overrides: ConfigOverrides = {}): Config {
  const loaded = loadConfig(process.env, overrides);
  if (!loaded.ok) throw new CliError(`configuration: ${loaded.errors.map((e) => e.message).join("; ")}`, exitCodes.usage);
  return loaded.value;
}

/** Opens the configured database (embedded unless DATABASE_URL is set), migrated, for one command. */
export async function withDatabase<T>(work: (db: Database, config: Config) => Promise<T>, options: { migrate?: boolean } = {}): Promise<T> {
  const config = configOrExit();
  const db = await openDatabase(config.databaseUrl ? { databaseUrl: config.databaseUrl, home: config.home, poolMax: 4 } : { home: config.home, poolMax: 4 });
  try {
    if (options.migrate !== false) await migrate(db.pool);
    return await work(db, config);
  } finally {
    await db.close();
  }
}
