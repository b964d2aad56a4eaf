import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { limits } from "../../config/limits.ts";
import type { Pool } from "../../db/pool.ts";
import { dryRun } from "../../files/dry-run.ts";
import { partnerForIngest } from "../../partners/partners.ts";
import { processFile } from "../../files/pipeline.ts";
import { receiveSmallFileInTransaction, sanitizeFileName } from "../../files/receipt.ts";
import { fileOutcomes, fileReport, listFiles } from "../../files/report.ts";
import { send } from "../http-context.ts";
import { runIdempotent } from "../../requests/idempotent-request.ts";
import { operatorOf, operatorWithRole } from "../operator-session.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import { minorToDecimal } from "../../protocols/iso4217/currency.ts";
import { routeSchema } from "../route-schema.ts";
import { fileUploadQuery } from "./files.ts";

const tags = ["operations"] as const;
const schemas = {
  list: routeSchema({ operationId: "opsListFiles", summary: "Received files", tags, auth: "session", query: { status: { type: "string", enum: ["received", "processing", "done", "rejected"] } }, ok: { 200: "{ files }" } }),
  show: routeSchema({ operationId: "opsGetFile", summary: "A file's report and per-record outcomes", tags, auth: "session", params: ["id"], ok: { 200: "the report with record_outcomes" }, problems: { 404: "not_found: no such file" } }),
  preview: routeSchema({
    operationId: "opsPreviewFile",
    summary: "What the file would do, record by record (new, already applied, changed with both amounts, rejected, dropped); stores nothing", tags, auth: "session_csrf",
    body: "raw", query: fileUploadQuery, queryRequired: ["name"], ok: { 200: "the dry-run report, amounts also as decimal strings, and the bytes' sha256" }, problems: { 413: "request_too_large" },
  }),
  confirm: routeSchema({
    operationId: "opsConfirmFileReupload",
    summary: "Confirm a re-upload: receive and apply the file", tags, auth: "session_csrf", body: "raw", query: fileUploadQuery, queryRequired: ["name"], idempotencyKey: true,
    ok: { 201: "the file's report; a repeat of the key answers the same (Idempotent-Replayed: true)" }, problems: { 413: "request_too_large", 422: "idempotency_key_reuse" },
  }),
};

interface Upload { name: string; partnerId: string; body: Buffer }

type UploadRequest = FastifyRequest<{ Querystring: { name?: string; partner?: string } }>;

/** The uploaded bytes, a plain file name and the partner; or the 400 already sent. */
async function uploadOf(pool: Pool, request: UploadRequest, reply: FastifyReply, tenantId: string): Promise<Upload | undefined> {
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const named = sanitizeFileName(request.query.name ?? "");
  if (!named.ok) {
    void send(reply, problemReply("REQUEST_INVALID", "name the file: ?name=NAME (a plain file name)", { errors: [{ code: named.error.code, field: "name" }] }));
    return undefined;
  }
  if (body.byteLength === 0) {
    void send(reply, problemReply("REQUEST_INVALID", "the body is empty: send the file's bytes", { errors: [{ code: "INPUT_EMPTY", field: "body" }] }));
    return undefined;
  }
  const partner = await partnerForIngest(pool, tenantId, request.query.partner);
  if (!partner.ok) {
    void send(reply, problemReply("REQUEST_INVALID", partner.error.message, { errors: [{ code: partner.error.code, field: "partner" }] }));
    return undefined;
  }
  return { name: named.value, partnerId: partner.value.partnerId, body };
}

/**
 * Files for signed-in operators: list, show with per-record outcomes, and the re-upload in two
 * steps: POST /v1/ops/files/preview runs the ingest dry run on the bytes (stores and posts
 * nothing); POST /v1/ops/files (Idempotency-Key) receives and applies the same bytes, as
 * POST /v1/files does for API clients. Cancelling is not sending the second request.
 */
export function registerFileOperations(scope: FastifyInstance, deps: { pool: Pool }): void {
  scope.get<{ Querystring: { status?: string } }>("/v1/ops/files", { schema: schemas.list }, async (request, reply) => {
    const status = request.query.status;
    if (status !== undefined && !["received", "processing", "done", "rejected"].includes(status)) return send(reply, problemReply("REQUEST_INVALID", "status is received, processing, done or rejected"));
    return send(reply, jsonReply(200, { files: await listFiles(deps.pool, operatorOf(request).tenantId, { limit: limits.ingest.listRowsMax, ...(status ? { status } : {}) }) }));
  });

  scope.get<{ Params: { id: string } }>("/v1/ops/files/:id", { schema: schemas.show }, async (request, reply) => {
    const tenantId = operatorOf(request).tenantId;
    const report = await fileReport(deps.pool, tenantId, request.params.id);
    if (!report) return send(reply, problemReply("NOT_FOUND", `no file ${request.params.id}`));
    return send(reply, jsonReply(200, { ...report, record_outcomes: await fileOutcomes(deps.pool, tenantId, request.params.id) }));
  });

  void scope.register(async (uploads) => {
    uploads.removeAllContentTypeParsers();
    uploads.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: limits.ingest.httpUploadBytesMax }, (_request, body, done) => done(null, body));

    uploads.post<{ Querystring: { name?: string; partner?: string } }>("/v1/ops/files/preview", { bodyLimit: limits.ingest.httpUploadBytesMax, schema: schemas.preview }, async (request, reply) => {
      const operator = operatorWithRole(request, reply, "approver");
      if (!operator) return reply;
      const upload = await uploadOf(deps.pool, request, reply, operator.tenantId);
      if (!upload) return reply;
      const preview = await dryRun(deps.pool, operator.tenantId, async function* () { yield upload.body; }, { name: upload.name });
      return send(reply, jsonReply(200, { ...withDecimalAmounts(preview), sha256: createHash("sha256").update(upload.body).digest("hex") }));
    });

    uploads.post<{ Querystring: { name?: string; partner?: string } }>("/v1/ops/files", { bodyLimit: limits.ingest.httpUploadBytesMax, schema: schemas.confirm }, async (request, reply) => {
      const operator = operatorWithRole(request, reply, "approver");
      if (!operator) return reply;
      const upload = await uploadOf(deps.pool, request, reply, operator.tenantId);
      if (!upload) return reply;
      const tenantId = operator.tenantId;
      const answer = await runIdempotent({
        pool: deps.pool, tenantId, endpoint: "POST /v1/ops/files", idempotencyKeyHeader: request.headers["idempotency-key"],
        canonical: { name: upload.name, partner: upload.partnerId, sha256: createHash("sha256").update(upload.body).digest("hex") },
        effect: async (tx) => {
          const receipt = await receiveSmallFileInTransaction(tx, { tenantId, partnerId: upload.partnerId, source: "http", name: upload.name, content: upload.body });
          if (!receipt.ok) return problemReply("REQUEST_INVALID", receipt.error.message, { errors: [{ code: receipt.error.code }] });
          return jsonReply(202, { file_id: receipt.value.fileId, status: "received" }, receipt.value.fileId);
        },
      });
      const fileId = answer.effectRef;
      if (!fileId || (answer.status !== 202 && !answer.replayed)) return send(reply, answer);
      const report = await processFile(deps.pool, tenantId, fileId);
      if (answer.replayed) reply.header("idempotent-replayed", "true");
      // A repeat of the key answers as the first did: 201 and the file's report (a done file's
      // report does not change; one cut short by a crash is finished first).
      return send(reply, jsonReply(201, report));
    });
  });
}

type Preview = Awaited<ReturnType<typeof dryRun>>;

/**
 * The preview with each amount also as a decimal string in its currency's exponent, made here
 * from the exact minor units, so the page's script never does arithmetic on money.
 */
function withDecimalAmounts(preview: Preview): Preview & { records_listed: Array<{ amount?: string; original_amount?: string }> } {
  const decimal = (minor: string | undefined, currency: string | undefined) => (minor === undefined || currency === undefined ? undefined : minorToDecimal(BigInt(minor), currency));
  return {
    ...preview,
    records_listed: preview.records_listed.map((r) => {
      const amount = decimal(r.amount_minor, r.currency);
      const original = decimal(r.original_amount_minor, r.currency);
      return { ...r, ...(amount === undefined ? {} : { amount }), ...(original === undefined ? {} : { original_amount: original }) };
    }),
    dropped_records: preview.dropped_records === null ? null : {
      ...preview.dropped_records,
      records: preview.dropped_records.records.map((d) => ({ ...d, amount: minorToDecimal(BigInt(d.amount_minor), d.currency) })),
    },
  };
}
