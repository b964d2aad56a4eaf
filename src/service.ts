import type { AddressInfo } from "node:net";
import { buildHttpServer } from "./api/server.ts";
import type { Config } from "./config/config.ts";
import { openDatabase, type Database } from "./db/database.ts";
import { migrate } from "./db/migrate.ts";
import { advanceProjection, tenantsWithEntries } from "./ledger/balance.ts";
import type { Logger } from "./observability/logger.ts";

/**
 * The composition root: the one place that wires database, ledger jobs and driving adapters
 * (HTTP now; the ISO 8583 endpoint and file sources plug in here). Nothing imports this file
 * but the CLI.
 */
export interface RunningService {
  httpUrl: string;
  database: Database;
  stop(): Promise<void>;
}

export async function startService(config: Config, logger: Logger): Promise<RunningService> {
  const database = await openDatabase({
    ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}),
    home: config.home,
    log: (line) => logger.debug({ component: "postgres" }, line),
  });
  const migrated = await migrate(database.pool);
  logger.info({ applied: migrated.applied, embedded: database.embedded }, "database ready");

  const http = buildHttpServer({ pool: database.pool, logger });
  await http.listen({ host: config.httpHost, port: config.httpPort });
  const address = http.server.address() as AddressInfo;
  const httpUrl = `http://${address.address}:${address.port}`;

  const projection = startProjectionLoop(database, config.projectionIntervalMs, logger);

  let stopping: Promise<void> | undefined;
  return {
    httpUrl,
    database,
    stop() {
      stopping ??= (async () => {
        projection.stop();
        await http.close();
        await projection.idle();
        await database.close();
        logger.info("stopped");
      })();
      return stopping;
    },
  };
}

/** Advances every tenant's balance projection on a timer; one run at a time, never overlapping. */
function startProjectionLoop(database: Database, intervalMs: number, logger: Logger): { stop(): void; idle(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const timer = setInterval(() => {
    running = running.then(async () => {
      if (stopped) return;
      try {
        for (const tenantId of await tenantsWithEntries(database.pool)) {
          if (stopped) return;
          await advanceProjection(database.pool, tenantId);
        }
      } catch (error) {
        logger.warn({ err: error }, "balance projection did not advance; balances stay exact, reads just sum more entries");
      }
    });
  }, intervalMs);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
    idle: () => running,
  };
}
