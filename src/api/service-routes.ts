import type { FastifyInstance } from "fastify";
import type { Pool } from "../db/pool.ts";
import type { CardAuthorizationSender } from "../cards/index.ts";
import type { IngestOptions } from "../files/pipeline.ts";
import { registerCardAuthorizationRoutes } from "./routes/card-authorizations.ts";
import { registerFileRoutes } from "./routes/files.ts";
import { registerFleetRoutes, type FleetProcessView } from "./routes/fleet.ts";
import { registerPaymentRequestRoutes } from "./routes/payment-requests.ts";
import { registerReconciliationRoutes } from "./routes/reconciliations.ts";

/**
 * The routes `clearline serve` adds to the HTTP server beyond its own (buildHttpServer): they need
 * the card gateway or the ingest settings. One list, used by the service and by the test that holds
 * /openapi.json against every registered route.
 */
export function serviceRoutes(deps: {
  pool: Pool; authorizer: CardAuthorizationSender; fileIngest?: IngestOptions;
  fleet?: FleetProcessView;
}): Array<(app: FastifyInstance) => void> {
  return [
    (app) => registerFleetRoutes(app, {
      pool: deps.pool, ...(deps.fleet ? { fleet: deps.fleet } : {}),
    }),
    (app) => registerCardAuthorizationRoutes(app, { authorizer: deps.authorizer }),
    (app) => registerFileRoutes(app, {
      pool: deps.pool, ...(deps.fileIngest ? { fileIngest: deps.fileIngest } : {}),
    }),
    (app) => registerReconciliationRoutes(app, { pool: deps.pool }),
    (app) => registerPaymentRequestRoutes(app, { pool: deps.pool }),
  ];
}
