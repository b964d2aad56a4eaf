import type { AddressInfo } from "node:net";
import { buildHttpServer } from "./api/server.ts";
import { serviceRoutes } from "./api/service-routes.ts";
import { AbandonedFiles } from "./files/abandoned-files.ts";
import { setProcessConfig, type Config } from "./config/config.ts";
import { limits } from "./config/limits.ts";
import { openDatabase, type Database } from "./db/database.ts";
import { DatabaseHealth, type DatabaseLostError } from "./db/database-health.ts";
import { migrate, pendingMigrations } from "./db/migrate.ts";
import { assertSessionConnections } from "./db/session-check.ts";
import { loadCardKeys, openCardChannel } from "./cards/index.ts";
import { startCardGateway, type CardGateway } from "./gateway/gateway.ts";
import { startIngestSources, type IngestSources } from "./sources/sources.ts";
import type { Logger } from "./observability/logger.ts";
import { startOutbox } from "./outbox/outbox-service.ts";
import { loadWebhookSecretKeys } from "./outbox/webhooks/secret-box.ts";
import { sealClearWebhookSecrets } from "./outbox/webhooks/webhook-store.ts";
import { partnerDeliverers } from "./partners/outbound/outbound-deliverers.ts";
import { projectionLagDeltas } from "./observability/metrics.ts";
import { evaluateReadiness, type ReadinessCheck } from "./observability/readiness.ts";
import {
  holdNatsInbox, holdSchemeLink, holdSource, leasedSchemeLinkHealth, openServiceFleet,
} from "./service/fleet-leases.ts";
import { holdSingletonJobs } from "./service/singleton-jobs.ts";

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

export interface ServiceHooks {
  /** The embedded server died and did not start again within its bound: the process must end. */
  onDatabaseLost?(error: DatabaseLostError): void;
}

export async function startService(
  config: Config, logger: Logger, hooks: ServiceHooks = {},
): Promise<RunningService> {
  // What this process's decisions write (events queued for NATS or not) follows this config.
  setProcessConfig(config);
  const database = await openDatabase({
    ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}),
    home: config.home,
    log: (line) => logger.debug({ component: "postgres" }, line),
  });
  // What has started, closed in reverse order when a later part cannot start: a service without
  // its HTTP listener or its scheme endpoint must not run half-alive holding the other's port.
  const started: Array<() => Promise<void>> = [async () => database.close()];
  try {
    return await startOnDatabase(config, logger, database, started, hooks);
  } catch (error) {
    for (const stop of started.reverse()) {
      await stop().catch((failure: unknown) => logger.warn({ err: failure }, "closing after a failed start failed"));
    }
    throw error;
  }
}

/** A listener that could not open, named, with the system's reason (EADDRINUSE, EACCES). */
async function listening<T>(name: string, open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${name} did not open: ${reason}`, { cause: error });
  }
}

/** Everything after the database opened; each part that starts adds its stop to `started`. */
async function startOnDatabase(
  config: Config, logger: Logger, database: Database, started: Array<() => Promise<void>>,
  hooks: ServiceHooks,
): Promise<RunningService> {
  const webhookKeys = await prepareDatabase(config, logger, database);
  // Losing the database from here on: probed, restarted when embedded, reported (decision 0081).
  const health = watchDatabase(config, logger, database, hooks);
  started.push(() => health.stop());

  const endpointName = `the ISO 8583 scheme endpoint on ${config.iso8583Host}:${config.iso8583Port}`;
  // The card channel: the ISO 8583 adapter over the card-messages service (src/cards/).
  const cardKeys = loadCardKeys({ home: config.home, secretHex: config.cardHashSecret });
  const cardChannel = openCardChannel(database.pool, cardKeys);
  const cardGateway = await listening(endpointName, () => startCardGateway(config, cardChannel, logger));
  started.push(() => cardGateway.stop());
  // Sources, the inbox, the scheme link and the jobs run where their lease is held (decision 0072).
  const { fleet, close: closeFleet } = openServiceFleet(config, database.url, logger);
  started.push(closeFleet);
  const schemeLinkLease = holdSchemeLink(fleet, cardGateway);
  // /readyz answers from the moment HTTP listens; the sources start after it.
  const running: { sources?: IngestSources } = {};
  const linkHealth = leasedSchemeLinkHealth(fleet, cardGateway, schemeLinkLease);
  const checks = readinessChecks(database, health, linkHealth, () => running.sources);
  // An uploaded file whose run the database cut short is taken up again here (not in a minute).
  const abandonedFiles = retriesOfFailedFiles(config, logger, database, started);
  const http = buildHttpServer({
    pool: database.pool, logger, webhookKeys,
    readiness: () => evaluateReadiness(checks), liveness: () => health.liveness(),
    extraRoutes: serviceRoutes({
      pool: database.pool, authorizer: cardGateway.authorizer,
      fileIngest: abandonedFiles.ingestOptions(),
      fleet: {
        holder: fleet.holder, leaseMs: config.fleetLeaseMs, takeoverBoundMs: fleet.takeoverBoundMs,
      },
    }),
  });
  started.push(() => http.close());
  const httpName = `the HTTP listener on ${config.httpHost}:${config.httpPort}`;
  await listening(httpName, () => http.listen({ host: config.httpHost, port: config.httpPort }));
  const address = http.server.address() as AddressInfo;
  const httpUrl = `http://${address.address}:${address.port}`;
  fleet.setHolderAddress(httpUrl);
  const sources = await startIngestSources(
    database.pool, config.ingest, config.home, logger, holdSource(fleet), config);
  running.sources = sources;
  started.push(() => sources.stop());
  // Partners' folders and SFTP outboxes (docs/decisions/0025); a configured partner that does not exist is named, not fatal.
  const partners = await partnerDeliverers(database.pool, config.ingest.partnerOutbound, config.ingest.sftpPartners);
  for (const problem of partners.errors) logger.warn({ code: problem.code }, problem.message);
  const outbox = await startOutbox(database.pool, {
    leaseMs: config.outboxLeaseMs, webhookKeys, extraDeliverers: partners.deliverers, ...(config.natsUrl ? { natsUrl: config.natsUrl } : {}),
  }, logger);
  started.push(() => outbox.stop());
  // Payment instructions from JetStream, on the stream the outbox opened (docs/decisions/0024).
  if (outbox.eventStream) holdNatsInbox(fleet, database.pool, outbox.eventStream, logger);
  holdSingletonJobs(fleet, database.pool, config, logger);
  fleet.start();

  let stopping: Promise<void> | undefined;
  return {
    httpUrl,
    iso8583Port: cardGateway.iso8583Port,
    database,
    stop() {
      stopping ??= (async () => {
        await http.close();
        await abandonedFiles.stop();
        // No probe may take the database's orderly stop below for a death.
        await health.stop();
        // Every leased work stops, and its lease is let go for the other processes to take.
        await closeFleet();
        await sources.stop();
        await outbox.stop();
        await cardGateway.stop();
        await database.close();
        logger.info("stopped");
      })();
      return stopping;
    },
  };
}

function retriesOfFailedFiles(
  config: Config, logger: Logger, database: Database, started: Array<() => Promise<void>>,
): AbandonedFiles {
  const retries = new AbandonedFiles(database.pool, logger, {
    suspectWindowHours: config.ingest.suspectWindowHours,
  });
  started.push(() => retries.stop());
  return retries;
}

/** Checks the sessions, migrates, seals clear webhook secrets; the webhook keys for the outbox. */
async function prepareDatabase(
  config: Config, logger: Logger, database: Database,
): Promise<ReturnType<typeof loadWebhookSecretKeys>> {
  // One PostgreSQL session per pooled client, or no start (decision 0073: no transaction pooling).
  await assertSessionConnections(database.pool);
  const migrated = await migrate(database.pool);
  const webhookKeys = loadWebhookSecretKeys({ home: config.home, secretHex: config.webhookSecretKey });
  // Secrets stored in clear before migration 0027 are sealed before any delivery (docs/decisions/0065).
  const sealed = await sealClearWebhookSecrets(database.pool, () => webhookKeys, limits.outbox.webhookSecretsSealedPerStatementMax);
  logger.info({ applied: migrated.applied, embedded: database.embedded, webhookSecretsSealed: sealed }, "database ready");
  return webhookKeys;
}

/** The probe of the database (and the restart of an embedded one this process owns). */
function watchDatabase(
  config: Config, logger: Logger, database: Database, hooks: ServiceHooks,
): DatabaseHealth {
  const health = new DatabaseHealth({
    url: database.url, logger: logger.child({ component: "database" }),
    livenessWithoutDatabaseMs: config.livenessWithoutDatabaseMs,
    ...(database.server ? { server: database.server } : {}),
    onGaveUp: (error) => {
      logger.fatal({ code: error.code }, error.message);
      hooks.onDatabaseLost?.(error);
    },
  });
  health.start();
  return health;
}

/**
 * What /readyz asks. Each check names why it fails. The projection's lag is read from the gauge
 * its job sets at each advance (the projection's internals are not this file's business).
 */
function readinessChecks(
  database: Database, health: DatabaseHealth, cardGateway: CardGateway,
  sources: () => IngestSources | undefined,
): ReadinessCheck[] {
  const checks: ReadinessCheck[] = [
    {
      name: "database",
      // The probe's verdict (why, since when) while it fails; else the pool is asked too.
      check: async () => {
        const probed = health.readiness();
        if (!probed.ok) return probed;
        await database.pool.query("SELECT 1");
        return { ok: true };
      },
    },
    {
      name: "migrations",
      check: async () => {
        const pending = await pendingMigrations(database.pool);
        return pending.length === 0 ? { ok: true } : { ok: false, reason: `not applied: ${pending.join(", ")} (clearline migrate)` };
      },
    },
    { name: "sources", check: () => sources()?.health() ?? { ok: false, reason: "the file sources have not started yet" } },
    {
      name: "projection_lag",
      check: async () => {
        const lags = (await projectionLagDeltas.get()).values;
        const worst = lags.reduce((max, v) => (v.value > max.value ? v : max), { value: 0, labels: {} as Record<string, string | number> });
        if (worst.value <= limits.ledger.projectionLagDeltasMax) return { ok: true };
        return { ok: false, reason: `the balance projection of tenant ${String(worst.labels.tenant)} is ${worst.value} unfolded balance delta rows behind (bound ${limits.ledger.projectionLagDeltasMax})` };
      },
    },
  ];
  if (cardGateway.schemeLinkHealth() !== undefined) {
    checks.push({ name: "scheme_link", check: () => cardGateway.schemeLinkHealth() ?? { ok: true } });
  }
  return checks;
}
