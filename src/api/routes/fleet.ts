import type { FastifyInstance } from "fastify";
import type { Pool } from "../../db/pool.ts";
import { listLeases, type LeaseRow } from "../../fleet/index.ts";
import { routeSchema } from "../route-schema.ts";

/** This process as the fleet knows it (src/fleet/): its name in fleet_lease, its lease's bounds. */
export interface FleetProcessView {
  holder: string;
  leaseMs: number;
  takeoverBoundMs: number;
}

/** One lease as /fleet, `clearline status` and the console show it. */
export function leaseView(lease: LeaseRow, holder: string | undefined): Record<string, unknown> {
  return {
    lease: lease.leaseName,
    holder: lease.holder,
    holder_address: lease.holderAddress,
    held_here: holder !== undefined && lease.holder === holder && lease.live,
    live: lease.live,
    token: lease.token.toString(),
    since: lease.acquiredAt.toISOString(),
    renewed_at: lease.renewedAt.toISOString(),
    until: lease.leaseUntil.toISOString(),
    released_at: lease.releasedAt?.toISOString() ?? null,
    previous_holder: lease.previousHolder,
  };
}

const fleetSchema = routeSchema({
  operationId: "listFleetLeases",
  summary: "The fleet's leases (file sources, singleton jobs, the scheme link): holder and its "
    + "address, since, until, fencing token; and which this process holds",
  tags: ["service"], auth: "public",
  ok: {
    200: "{ process: { holder, lease_ms, takeover_bound_ms }, leases: [{ lease, holder, "
      + "holder_address, held_here, live, token, since, renewed_at, until, released_at, "
      + "previous_holder }] }",
  },
});

/** GET /fleet: which process holds what, from fleet_lease (every process answers the same rows). */
export function registerFleetRoutes(
  app: FastifyInstance, deps: { pool: Pool; fleet?: FleetProcessView },
): void {
  app.get("/fleet", { schema: fleetSchema }, async () => {
    const leases = await listLeases(deps.pool);
    const fleet = deps.fleet;
    const process = fleet === undefined ? null
      : { holder: fleet.holder, lease_ms: fleet.leaseMs, takeover_bound_ms: fleet.takeoverBoundMs };
    return { process, leases: leases.map((lease) => leaseView(lease, deps.fleet?.holder)) };
  });
}
