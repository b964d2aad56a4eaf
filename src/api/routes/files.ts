import { createHash } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { limits } from "../../config/limits.ts";
import type { Pool } from "../../db/pool.ts";
import { partnerForIngest } from "../../partners/partners.ts";
import { processFile, type IngestOptions } from "../../files/pipeline.ts";
import { receiveSmallFileInTransaction, sanitizeFileName } from "../../files/receipt.ts";
import { fileOutcomes, fileReport } from "../../files/report.ts";
import { send, tenantOf } from "../http-context.ts";
import { runIdempotent } from "../../requests/idempotent-request.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import { routeSchema } from "../route-schema.ts";
import { registerFileReads } from "./file-reads.ts";

export interface FileRouteDependencies {
  pool: Pool;
  /** How its files are processed: the service's suspect window, and its retry of a failed run. */
  fileIngest?: IngestOptions;
}

export const fileUploadQuery = {
  name: { type: "string", description: "the file's name (a plain file name); or the x-file-name header" },
  partner: { type: "string", description: "the clearing partner (default: the tenant's only partner)" },
};
const uploadSchema = routeSchema({
  operationId: "uploadFile",
  summary: "Upload a file (raw body), receive and apply it; a repeat of the key reports the same file", tags: ["files"], auth: "api_key",
  body: "raw", query: fileUploadQuery, idempotencyKey: true,
  ok: { 201: "the file's report; a repeat of the key answers the same (Idempotent-Replayed: true), finishing a file an earlier attempt left unfinished" },
  problems: { 400: "no name, an empty body or an unknown partner (request_invalid)", 413: "request_too_large: past httpUploadBytesMax", 422: "idempotency_key_reuse: the key was used for other bytes or another name" },
});
const showSchema = routeSchema({ operationId: "getFile", summary: "A file's report and per-record outcomes", tags: ["files"], auth: "api_key", params: ["id"], ok: { 200: "the report with record_outcomes" }, problems: { 404: "file_not_found: no such file" } });

/**
 * Files over HTTP (ops uploads):
 *   POST /v1/files?name=NAME[&partner=P]  raw body, Idempotency-Key required. The receipt commits
 *     with the key's claim; the file is then processed and its report returned (201). A repeat of
 *     the key answers the same: 201 and the file's report (Idempotent-Replayed);
 *     the key reused with other bytes or another name is 422.
 *   GET /v1/files (a page), GET /v1/files/{id} (report and per-record outcomes), and a file's
 *     records a page at a time (file-reads.ts).
 * Uploads are buffered whole, so they are bounded by httpUploadBytesMax; big files go through
 * SFTP or the drop folder.
 */
export function registerFileRoutes(app: FastifyInstance, deps: FileRouteDependencies): void {
  void app.register(async (files) => {
    files.removeAllContentTypeParsers();
    files.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: limits.ingest.httpUploadBytesMax }, (_request, body, done) => done(null, body));

    files.post<{ Querystring: { name?: string; partner?: string } }>("/v1/files", { bodyLimit: limits.ingest.httpUploadBytesMax, schema: uploadSchema }, async (request, reply) => {
      const tenantId = tenantOf(request).tenantId;
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const rawName = request.query.name ?? (typeof request.headers["x-file-name"] === "string" ? request.headers["x-file-name"] : undefined);
      const named = sanitizeFileName(rawName ?? "");
      if (!named.ok) return send(reply, problemReply("REQUEST_INVALID", "name the file: POST /v1/files?name=NAME (a plain file name)", { errors: [{ code: named.error.code, field: "name" }] }));
      if (body.byteLength === 0) return send(reply, problemReply("REQUEST_INVALID", "the body is empty: send the file's bytes", { errors: [{ code: "INPUT_EMPTY", field: "body" }] }));
      const partner = await partnerForIngest(deps.pool, tenantId, request.query.partner);
      if (!partner.ok) return send(reply, problemReply("REQUEST_INVALID", partner.error.message, { errors: [{ code: partner.error.code, field: "partner" }] }));
      const sha256 = createHash("sha256").update(body).digest("hex");
      const answer = await runIdempotent({
        pool: deps.pool, tenantId, endpoint: "POST /v1/files", idempotencyKeyHeader: request.headers["idempotency-key"],
        canonical: { name: named.value, partner: partner.value.partnerId, sha256 },
        effect: async (tx) => {
          const receipt = await receiveSmallFileInTransaction(tx, { tenantId, partnerId: partner.value.partnerId, source: "http", name: named.value, content: body });
          if (!receipt.ok) return problemReply("REQUEST_INVALID", receipt.error.message, { errors: [{ code: receipt.error.code }] });
          return jsonReply(202, { file_id: receipt.value.fileId, status: "received" }, receipt.value.fileId);
        },
      });
      if (answer.status !== 202 && !(answer.replayed && answer.effectRef)) return send(reply, answer);
      const fileId = answer.effectRef;
      if (!fileId) return send(reply, answer);
      // Processing resumes where any earlier attempt stopped; a finished file is just reported.
      const report = await processFile(deps.pool, tenantId, fileId, deps.fileIngest ?? {});
      if (answer.replayed) reply.header("idempotent-replayed", "true");
      // A repeat of the key answers as the first did: 201 and the file's report (a done file's
      // report does not change; one cut short by a crash is finished first).
      return send(reply, jsonReply(201, report));
    });
  });

  registerFileReads(app, deps);

  app.get<{ Params: { id: string } }>("/v1/files/:id", { schema: showSchema }, async (request, reply) => {
    const tenantId = tenantOf(request).tenantId;
    const report = await fileReport(deps.pool, tenantId, request.params.id);
    if (!report) return send(reply, problemReply("FILE_NOT_FOUND", `no file ${request.params.id}`));
    return send(reply, jsonReply(200, { ...report, record_outcomes: await fileOutcomes(deps.pool, tenantId, request.params.id) }));
  });
}
