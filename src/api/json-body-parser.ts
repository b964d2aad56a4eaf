import type { FastifyInstance } from "fastify";
import { limits } from "../config/limits.ts";
import { parseStrictJson, type JsonTextRefusal } from "../protocols/strict-json.ts";

/** A JSON body the strict parser refused: answered 400 under its own code by the error handler. */
export class JsonBodyRefused extends Error {
  readonly statusCode = 400;
  constructor(readonly refusal: JsonTextRefusal) {
    super(refusal.message);
    this.name = "JsonBodyRefused";
  }
}

/**
 * ONE parser for every `application/json` body, in place of fastify's (secure-json-parse, which
 * decodes invalid UTF-8 into U+FFFD, keeps the last of two equal member names and bounds no
 * depth): bytes in, the strict reader of src/protocols/strict-json.ts, a value or a refusal with
 * its byte offset (docs/decisions/0067). The body's size bound is fastify's, per route, as before.
 */
export function registerStrictJsonBodies(app: FastifyInstance): void {
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (_request, body, done) => {
    const parsed = parseStrictJson(body as Buffer, { depthMax: limits.http.jsonDepthMax });
    if (parsed.ok) done(null, parsed.value);
    else done(new JsonBodyRefused(parsed.error), undefined);
  });
}

/** The problem's `errors` entry of a refusal: where in the body, and which member. */
export function refusalErrors(refusal: JsonTextRefusal): Array<Record<string, unknown>> {
  return [{
    in: "body", code: refusal.code, message: refusal.message,
    ...(refusal.path === undefined || refusal.path === "" ? {} : { field: refusal.path }),
    ...(refusal.byteOffset === undefined ? {} : { offset: refusal.byteOffset }),
    ...(refusal.firstByteOffset === undefined ? {} : { first_offset: refusal.firstByteOffset }),
  }];
}
