import { Counter, Gauge } from "prom-client";
import { registry } from "./metrics.ts";

/** 1 for each lease this process holds now, 0 for those it contends for (docs/decisions/0072). */
export const fleetLeaseHeld = new Gauge({
  name: "clearline_fleet_lease_held",
  help: "1 when this process holds the lease (file source, singleton job, scheme link), else 0",
  labelNames: ["lease"] as const,
  registers: [registry],
});

/** Changes of this process's leases: acquired, lost (taken over, not renewed), released. */
export const fleetLeaseChanges = new Counter({
  name: "clearline_fleet_lease_changes_total",
  help: "Lease changes of this process by kind: acquired, lost, released",
  labelNames: ["lease", "change"] as const,
  registers: [registry],
});

/** Periods of singleton jobs this process claimed and ran. */
export const fleetJobRuns = new Counter({
  name: "clearline_fleet_job_runs_total",
  help: "Periods of a singleton job this process claimed and ran",
  labelNames: ["job"] as const,
  registers: [registry],
});
