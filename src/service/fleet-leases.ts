import type { Config } from "../config/config.ts";
import { limits } from "../config/limits.ts";
import { createPool } from "../db/pool.ts";
import { Fleet, fenceOf, processHolderId } from "../fleet/index.ts";
import type { CardGateway } from "../gateway/gateway.ts";
import type { Logger } from "../observability/logger.ts";
import type { EventStream } from "../outbox/nats/event-stream.ts";
import type { Pool } from "../db/pool.ts";
import { INBOX_CONSUMER, startNatsInbox, type NatsInbox } from "../sources/nats-inbox.ts";
import type { HoldSource } from "../sources/sources.ts";

/**
 * How `clearline serve` runs in a fleet (docs/decisions/0072): HTTP and the ISO 8583 endpoint run
 * on every process; each file source, the JetStream inbox, the outbound scheme link and each
 * singleton job (singleton-jobs.ts) run on the one process that holds its lease.
 */
export interface ServiceFleet {
  fleet: Fleet;
  /** Stops every leased work, lets the leases go, and closes the leases' pool. */
  close(): Promise<void>;
}

/** The fleet of this process, on a pool of its own (renewals never wait behind the work). */
export function openServiceFleet(
  config: Config, databaseUrl: string, logger: Logger,
): ServiceFleet {
  const pool = createPool(databaseUrl, {
    max: limits.fleet.poolConnectionsMax, applicationName: "clearline-leases",
  });
  const fleet = new Fleet(pool, {
    holder: processHolderId(), leaseMs: config.fleetLeaseMs,
    logger: logger.child({ component: "fleet" }),
  });
  return {
    fleet,
    async close() {
      await fleet.stop();
      await pool.end();
    },
  };
}

/** Each file source under its lease; its receipts are fenced by the grant they run under. */
export function holdSource(fleet: Fleet): HoldSource {
  return (leaseName, source) => fleet.hold(leaseName, {
    start: (grant) => source.start(fenceOf(grant)),
    stop: () => source.stop(),
  });
}

/** The lease of the outbound scheme link: one connection to the scheme for the whole fleet. */
export function schemeLinkLeaseName(connectionName: string): string {
  return `scheme-link:${connectionName}`;
}

/**
 * The outbound scheme link under its lease. Its pending reversals, undecided authorizations and
 * STAN counter are rows keyed by the connection's name, so the process granted the link next
 * sends what the last one left. Undefined when no outbound link is configured.
 */
export function holdSchemeLink(fleet: Fleet, gateway: CardGateway): string | undefined {
  const link = gateway.schemeLink;
  if (link === undefined) return undefined;
  const leaseName = schemeLinkLeaseName(link.name);
  fleet.hold(leaseName, {
    async start() {
      link.start();
    },
    stop: () => link.stop(),
  });
  return leaseName;
}

/**
 * The scheme link's readiness as this process sees it: signed on or why not where it holds the
 * link; where another process holds it, that process's business, so not a reason to be unready.
 * Where nobody is known to hold it (the lease was lost with the database and not asked for again
 * yet), the link is down for the whole fleet, and card authorizations would get 503: not ready.
 */
export function leasedSchemeLinkHealth(
  fleet: Fleet, gateway: CardGateway, leaseName: string | undefined,
): CardGateway {
  return {
    ...gateway,
    schemeLinkHealth() {
      const health = gateway.schemeLinkHealth();
      if (health === undefined || leaseName === undefined || fleet.isHeld(leaseName)) return health;
      if (fleet.isHeldElsewhere(leaseName)) return { ok: true };
      return {
        ok: false,
        reason: `no process is known to hold the scheme link's lease ${leaseName}; `
          + `this one asks for it every ${fleet.renewEveryMs} ms`,
      };
    },
  };
}

/**
 * The JetStream inbox's consumer under its lease: one consuming process (the idempotency record
 * of each message keeps it exact whoever consumes it).
 */
export function holdNatsInbox(fleet: Fleet, pool: Pool, stream: EventStream, logger: Logger): void {
  let inbox: NatsInbox | undefined;
  fleet.hold(`jetstream-inbox:${INBOX_CONSUMER}`, {
    async start() {
      inbox = await startNatsInbox(pool, stream, logger);
    },
    async stop() {
      await inbox?.stop();
      inbox = undefined;
    },
  });
}
