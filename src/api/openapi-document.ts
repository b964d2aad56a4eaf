import { routeTags, securitySchemes } from "./route-schema.ts";

/**
 * What /openapi.json says beside its operations (which @fastify/swagger gathers from the routes'
 * schemas, route-schema.ts): the API's name, licence, server and the tags the operations name. A
 * fresh object per server: @fastify/swagger keeps these objects in the document it builds.
 */
export const openApiDocument = () => ({
  openapi: "3.1.0",
  info: {
    title: "clearline",
    version: "1",
    description: "Payments applied exactly once. Generated from the routes' schemas. "
      + "Idempotency contract: docs/api/idempotency.md; error codes: docs/errors.md. "
      + "Every answer carries a Request-Id header: the request's own Request-Id when it is 1 to "
      + "128 of A-Z a-z 0-9 . _ : -, else a generated UUID; the service's log lines for the "
      + "request carry it as request_id.",
    // No licence is declared (package.json has none, nor the README): proprietary. SPDX's
    // LicenseRef- form names a licence off its list without inventing a URL for it.
    license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
  },
  // Relative: a client resolves it against wherever it fetched this document, so the same
  // document is right on every host, port and proxy path, and the service needs no setting for
  // its public URL (it has none) that could disagree with the one a client used.
  servers: [{ url: "/", description: "the server this document was fetched from" }],
  tags: Object.entries(routeTags).map(([name, description]) => ({ name, description })),
  components: { securitySchemes },
});
