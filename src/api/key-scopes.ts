import type { KeyAction } from "../tenants/api-keys.ts";

/**
 * What an API-key route needs of the key (docs/decisions/0097): every key reads; a mutating
 * route needs the scope of its kind. A mutating route missing here is refused to every key
 * (fail closed), and test/api/key-scopes.test.ts fails on it, so a new route must be placed.
 */
const mutatingRouteActions: Readonly<Record<string, KeyAction>> = {
  "POST /v1/payments": "payments",
  "POST /v1/refunds": "payments",
  "POST /v1/payment-requests": "payments",
  "POST /v1/card-authorizations": "payments",
  "POST /v1/accounts": "payments",
  "POST /v1/files": "files",
  "POST /v1/reviews/:id/decision": "operations",
  "POST /v1/reconciliations/imports": "operations",
  "POST /v1/reconciliations/runs": "operations",
  "POST /v1/reconciliations/differences/:id/correct": "operations",
  "POST /v1/reconciliations/differences/:id/explain": "operations",
};

const READING_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The action a route needs; undefined: a mutating route no scope allows. */
export function actionOfRoute(method: string, routeUrl: string): KeyAction | undefined {
  if (READING_METHODS.has(method)) return "read";
  return mutatingRouteActions[`${method} ${routeUrl}`];
}

/** The mutating routes placed, for the test that holds the list against the server's routes. */
export const placedMutatingRoutes: readonly string[] = Object.keys(mutatingRouteActions);
