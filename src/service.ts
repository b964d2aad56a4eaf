import type { AddressInfo } from "node:net";
import { registerCardAuthorizationRoutes } from "./api/routes/card-authorizations.ts";
import { registerFileRoutes } from "./api/routes/files.ts";
import { registerReconciliationRoutes } from "./api/routes/reconciliations.ts";
import { buildHttpServer } from "./api/server.ts";
import type { Config } from "./config/config.ts";
import { limits } from "./config/limits.ts";
import { openDatabase, type Database } from "./db/database.ts";
import { migrate } from "./db/migrate.ts";
import { startCardGateway } from "./gateway/gateway.ts";
import { deleteExpired, oldestInProgressAgeSeconds } from "./idempotency/records.ts";
import { startIngestSources } from "./ingest/sources.ts";
import { advanceProjection, tenantsWithAccounts } from "./ledger/balance.ts";
import type { Logger } from "./observability/logger.ts";
import { oldestInProgressAge } from "./observability/metrics.ts";

/**
 * The composition root: the one place that wires the database, the ledger jobs and the driving
 * adapters (HTTP API, ISO 8583 endpoint and outbound connection, drop folders and SFTP pollers).
 * Nothing imports this file but the CLI.
 */
export interface RunningService {
  httpUrl: string;
  iso8583Port: number | undefined;  // the scheme endpoint, when configured
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

  const cardGateway = await startCardGateway(config, database.pool, logger);
  const http = buildHttpServer({
    pool: database.pool,
    logger,
    extraRoutes: [
      (app) => registerCardAuthorizationRoutes(app, { authorizer: cardGateway.authorizer }),
      (app) => registerFileRoutes(app, { pool: database.pool, suspectWindowHours: config.ingest.suspectWindowHours }),
      (app) => registerReconciliationRoutes(app, { pool: database.pool }),
    ],
  });
  await http.listen({ host: config.httpHost, port: config.httpPort });
  const address = http.server.address() as AddressInfo;
  const httpUrl = `http://${address.address}:${address.port}`;
  const ingestSources = await startIngestSources(database.pool, config.ingest, config.home, logger);

  const jobs = [
    startPeriodicJob("balance projection", config.projectionIntervalMs, logger, async (isStopped) => {
      for (const tenantId of await tenantsWithAccounts(database.pool)) {
        if (isStopped()) return;
        await advanceProjection(database.pool, tenantId);
      }
    }),
    startPeriodicJob("idempotency expiry", limits.http.expiryIntervalMs, logger, async () => {
      await deleteExpired(database.pool);
      oldestInProgressAge.set(await oldestInProgressAgeSeconds(database.pool));
    }),
  ];

  let stopping: Promise<void> | undefined;
  return {
    httpUrl,
    iso8583Port: cardGateway.iso8583Port,
    database,
    stop() {
      stopping ??= (async () => {
        for (const job of jobs) job.stop();
        await http.close();
        await ingestSources.stop();
        await cardGateway.stop();
        await Promise.all(jobs.map((job) => job.idle()));
        await database.close();
        logger.info("stopped");
      })();
      return stopping;
    },
  };
}

/** Runs `work` every `intervalMs`; one run at a time, never overlapping; a failure is logged and retried next time. */
export function startPeriodicJob(name: string, intervalMs: number, logger: Logger, work: (isStopped: () => boolean) => Promise<void>): { stop(): void; idle(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const timer = setInterval(() => {
    running = running.then(async () => {
      if (stopped) return;
      try {
        await work(() => stopped);
      } catch (error) {
        logger.warn({ err: error, job: name }, "periodic job failed; it runs again at its next interval");
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
