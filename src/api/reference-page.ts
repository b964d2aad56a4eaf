import fastifySwaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";

/** Where the rendered reference of /openapi.json is served. */
export const referencePagePath = "/docs/api";

/**
 * The API reference as a page: Swagger UI rendering the same document as /openapi.json, its
 * scripts and styles served from node_modules by this server (no CDN, nothing fetched from the
 * internet: the online validator badge stays off). Public like /openapi.json, which says nothing
 * more; "Try it out" needs the caller's own API key. Register after @fastify/swagger.
 */
export function registerReferencePage(app: FastifyInstance): void {
  void app.register(fastifySwaggerUi, {
    routePrefix: referencePagePath,
    validatorUrl: false,
    uiConfig: { docExpansion: "none", deepLinking: true, displayOperationId: true },
    theme: { title: "clearline API reference" },
  });
}
