import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "../../src/db/pool.ts";
import { acquireLease, Fleet, type LeasedWork } from "../../src/fleet/index.ts";
import type { CardGateway } from "../../src/gateway/gateway.ts";
import { createLogger } from "../../src/observability/logger.ts";
import {
  leasedSchemeLinkHealth, schemeLinkLeaseName,
} from "../../src/service/fleet-leases.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";

const quiet = createLogger({
  destination: new Writable({ write(_chunk, _encoding, done) { done(); } }),
});
const linkName = "scheme.test:9000";
const leaseName = schemeLinkLeaseName(linkName);
const idle: LeasedWork = { async start() {}, async stop() {} };

/**
 * The link as this process's gateway sees it: configured, never signed on here (the process does
 * not run it). Only the readiness is read, so the rest of the gateway is left out.
 */
const notSignedOn = {
  schemeLinkHealth: () => ({ ok: false, reason: "not signed on" }),
} as Pick<CardGateway, "schemeLinkHealth"> as CardGateway;

describe("the scheme link's readiness in a fleet", () => {
  let db: TestDatabase;
  const pools: Pool[] = [];
  const fleets: Fleet[] = [];
  const newFleet = (holder: string) => {
    const pool = createPool(db.url, { max: 2 });
    pools.push(pool);
    const fleet = new Fleet(pool, { holder, leaseMs: 60_000, logger: quiet });
    fleets.push(fleet);
    return fleet;
  };
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => {
    for (const fleet of fleets) await fleet.stop().catch(() => undefined);
    for (const pool of pools) await pool.end().catch(() => undefined);
    await db.drop();
  });

  // Regression (CI soak seed 31): after a partition from PostgreSQL the lease was lost, /readyz
  // said ready while no process held the link, and a card authorization then got 503.
  it("is not ready while no process is known to hold the link's lease", () => {
    const fleet = newFleet("alone");
    fleet.hold(leaseName, idle);
    const health = leasedSchemeLinkHealth(fleet, notSignedOn, leaseName).schemeLinkHealth();
    expect(health?.ok).toBe(false);
    expect(health?.reason).toContain(leaseName);
  });

  it("is ready on a process whose last ask found another process holding the link", async () => {
    await acquireLease(db.pool, { leaseName, holder: "the other", leaseMs: 60_000 });
    const fleet = newFleet("this one");
    fleet.hold(leaseName, idle);
    const health = leasedSchemeLinkHealth(fleet, notSignedOn, leaseName);
    fleet.start();
    await eventually(() => fleet.isHeldElsewhere(leaseName));
    expect(fleet.isHeld(leaseName)).toBe(false);
    expect(health.schemeLinkHealth()).toEqual({ ok: true });
  });
});
