import type { FastifyInstance } from "fastify";

const routesOf = new WeakMap<FastifyInstance, Array<{ method: string; url: string }>>();

/** Records every route as it is added, so a test can hold the OpenAPI document against the routes that exist. */
export function recordRoutes(app: FastifyInstance): void {
  const routes: Array<{ method: string; url: string }> = [];
  routesOf.set(app, routes);
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) if (method !== "HEAD") routes.push({ method, url: route.url });
  });
}

export function registeredRoutes(app: FastifyInstance): ReadonlyArray<{ method: string; url: string }> {
  return routesOf.get(app) ?? [];
}
