import { createPool, type Pool } from "./pool.ts";
import { startEmbeddedPostgres, type EmbeddedServerControl } from "./embedded.ts";

export interface Database {
  pool: Pool;
  url: string;
  embedded: boolean;
  /** An embedded server this process owns (started or adopted), which it restarts if it dies. */
  server?: EmbeddedServerControl;
  close(): Promise<void>;
}

/**
 * DATABASE_URL set: that server. Unset: a real embedded PostgreSQL under CLEARLINE_HOME.
 * The same SQL runs on both.
 */
export async function openDatabase(options: { databaseUrl?: string; home: string; log?: (line: string) => void; poolMax?: number }): Promise<Database> {
  if (options.databaseUrl) {
    const pool = createPool(options.databaseUrl, options.poolMax === undefined ? {} : { max: options.poolMax });
    return { pool, url: options.databaseUrl, embedded: false, close: () => pool.end() };
  }
  const embedded = await startEmbeddedPostgres(options.home, options.log ? { log: options.log } : {});
  const pool = createPool(embedded.url, options.poolMax === undefined ? {} : { max: options.poolMax });
  return {
    pool,
    url: embedded.url,
    embedded: true,
    ...(embedded.server ? { server: embedded.server } : {}),
    close: async () => {
      await pool.end();
      await embedded.stop();
    },
  };
}
