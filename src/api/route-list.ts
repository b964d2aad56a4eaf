import type { FastifyInstance, FastifySchema } from "fastify";

export interface RegisteredRoute {
  method: string;
  url: string;
  schema: FastifySchema | undefined;
}

const routesOf = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/** Records every route as it is added, with its schema, so a test can hold the OpenAPI document against the routes that exist. */
export function recordRoutes(app: FastifyInstance): void {
  const routes: RegisteredRoute[] = [];
  routesOf.set(app, routes);
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) if (method !== "HEAD") routes.push({ method, url: route.url, schema: route.schema });
  });
}

export function registeredRoutes(app: FastifyInstance): readonly RegisteredRoute[] {
  return routesOf.get(app) ?? [];
}
