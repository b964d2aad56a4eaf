import { Counter, Gauge } from "prom-client";
import { registry } from "./metrics.ts";

/** Outbox deliveries by what happened: delivered, retry (a failed attempt due again), dead, fenced (another relay's lease won). */
export const outboxDeliveries = new Counter({
  name: "clearline_outbox_deliveries_total",
  help: "Outbox delivery attempts by outcome: delivered, retry, dead, held (a disabled destination), fenced",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

/** How far behind delivery is: the age of the oldest pending or delivering row, 0 when none. */
export const outboxOldestUndeliveredAge = new Gauge({
  name: "clearline_outbox_oldest_undelivered_age_seconds",
  help: "Age of the oldest outbox row not yet delivered (pending or delivering)",
  registers: [registry],
});
