import type { FastifyInstance } from "fastify";
import { describeUnstorable, firstUnstorableCharacter } from "../protocols/storable-text.ts";
import { send } from "./http-context.ts";
import { problemReply } from "../requests/reply.ts";

interface UnstorableField {
  field: string;
  message: string;
}

/** The first string (value or member name) PostgreSQL could not store, with its dotted path. */
function findUnstorable(value: unknown, path: string): UnstorableField | undefined {
  if (typeof value === "string") {
    const found = firstUnstorableCharacter(value);
    return found ? { field: path, message: describeUnstorable(found) } : undefined;
  }
  if (typeof value !== "object" || value === null || Buffer.isBuffer(value)) return undefined;
  for (const [name, member] of Object.entries(value)) {
    const memberPath = path === "" ? name : `${path}.${name}`;
    const badName = firstUnstorableCharacter(name);
    if (badName) return { field: memberPath, message: `the member name ${describeUnstorable(badName)}` };
    const inner = findUnstorable(member, memberPath);
    if (inner) return inner;
  }
  return undefined;
}

/**
 * ONE check for every route, after authentication and body parsing and before any handler: a
 * NUL or an unpaired surrogate anywhere in the path parameters, the query or a parsed body is a
 * 422 naming the field, so no route can pass such text on to the database (where it would be a
 * 500 that fails the same way on every retry). Raw bodies (file uploads) are Buffers and are
 * judged by their file readers, which report a finding with its position.
 */
export function registerStorableTextGuard(app: FastifyInstance): void {
  app.addHook("preHandler", async (request, reply) => {
    const parts: Array<[string, unknown]> = [["path", request.params], ["query", request.query], ["body", request.body]];
    for (const [part, value] of parts) {
      const found = findUnstorable(value, "");
      if (!found) continue;
      const field = found.field === "" ? part : found.field;
      const where = part === "path" ? "path parameter" : part === "query" ? "query parameter" : "field";
      const detail = `the ${where} ${field} ${found.message}`;
      return send(reply, problemReply("TEXT_CHARACTER_INVALID", detail, { errors: [{ field, in: part, code: "TEXT_CHARACTER_INVALID", message: found.message }] }));
    }
  });
}
