import type { FastifyInstance } from "fastify";
import type { Pool } from "../../db/pool.ts";
import { fileExists, filesPage } from "../../files/report.ts";
import { fileRecordsPage } from "../../records/index.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import { send, tenantOf } from "../http-context.ts";
import { fileListQuery, fileRecordListQuery, instantOf } from "../list-queries.ts";
import {
  itemAnswer, listAnswer, listReply, partnerIdOfFilter, readListQuery,
} from "../list-reply.ts";
import {
  fileExample, fileItem, fileRecordExample, fileRecordItem,
} from "../list-resources.ts";
import { routeSchema } from "../route-schema.ts";
import { fileRecordView } from "../views.ts";

const listSchema = routeSchema({
  operationId: "listFiles",
  summary: "Received files a page at a time, the oldest first (filters: status, partner, source, "
    + "received range)",
  tags: ["files"], auth: "api_key", query: fileListQuery,
  ok: { 200: listAnswer("file", fileItem, fileExample) },
  problems: {
    400: "request_invalid: a limit out of bounds, a cursor it did not give, or an unknown "
      + "status or source",
  },
});
const recordsSchema = routeSchema({
  operationId: "listFileRecords",
  summary: "A file's records a page at a time, in file order (filter: outcome), each with its "
    + "review and the original it repeats or conflicts with",
  tags: ["files"], auth: "api_key", params: ["id"], query: fileRecordListQuery,
  ok: { 200: listAnswer("record", fileRecordItem, fileRecordExample) },
  problems: {
    400: "request_invalid: a limit out of bounds, a cursor it did not give, or an unknown outcome",
    404: "file_not_found",
  },
});
const recordSchema = routeSchema({
  operationId: "getFileRecord", summary: "One record of a file, by its index (1: the first)",
  tags: ["files"], auth: "api_key", params: ["id", "index"],
  ok: { 200: itemAnswer("the record", fileRecordItem, fileRecordExample) },
  problems: { 404: "file_not_found, or file_record_not_found: no record at this index" },
});

const INDEX_MAX = 2 ** 31 - 1; // a record's index is an integer column

/**
 * GET /v1/files (a page of reports), GET /v1/files/{id}/records (a page of a file's records,
 * by their place in the file) and GET /v1/files/{id}/records/{index}.
 */
export function registerFileReads(app: FastifyInstance, deps: { pool: Pool }): void {
  app.get("/v1/files", { schema: listSchema }, async (request, reply) => {
    const read = readListQuery(fileListQuery, request.query, "file list");
    if (!read.ok) return send(reply, read.reply);
    const { query } = read;
    const tenantId = tenantOf(request).tenantId;
    const page = await filesPage(deps.pool, tenantId, {
      after: read.after, status: query.status, source: query.source, limit: query.limit,
      partnerId: await partnerIdOfFilter(deps.pool, tenantId, query.partner),
      receivedFrom: instantOf(query.created_from), receivedBefore: instantOf(query.created_before),
    });
    return send(reply, listReply(page, (file) => file));
  });

  const records = { schema: recordsSchema };
  app.get<{ Params: { id: string } }>("/v1/files/:id/records", records, async (request, reply) => {
    const read = readListQuery(fileRecordListQuery, request.query, "file record list");
    if (!read.ok) return send(reply, read.reply);
    const tenantId = tenantOf(request).tenantId;
    const fileId = request.params.id;
    if (!(await fileExists(deps.pool, tenantId, fileId))) {
      return send(reply, problemReply("FILE_NOT_FOUND", `no file ${fileId}`));
    }
    // The place is the record's index in this file: a cursor of another file is not one given.
    const after = read.after;
    if (after !== undefined && (after.id !== fileId || Number(after.position) > INDEX_MAX)) {
      return send(reply, problemReply("REQUEST_INVALID", "the cursor is not one this list gave out",
        { errors: [{ field: "cursor", message: "a cursor of another file" }] }));
    }
    const { limit, outcome } = read.query;
    const rows = await fileRecordsPage(deps.pool, tenantId, fileId, {
      afterIndex: after === undefined ? 0 : Number(after.position),
      outcome: outcome ?? null, rowsMax: limit + 1,
    });
    const kept = rows.slice(0, limit);
    const last = kept.at(-1);
    const next = rows.length > limit && last ? { position: String(last.index), id: fileId } : null;
    return send(reply, listReply({ items: kept, next }, (row) => fileRecordView(fileId, row)));
  });

  const getOne = { schema: recordSchema };
  type RecordParams = { Params: { id: string; index: string } };
  app.get<RecordParams>("/v1/files/:id/records/:index", getOne, async (request, reply) => {
    const tenantId = tenantOf(request).tenantId;
    const { id: fileId, index } = request.params;
    if (!(await fileExists(deps.pool, tenantId, fileId))) {
      return send(reply, problemReply("FILE_NOT_FOUND", `no file ${fileId}`));
    }
    const wanted = /^[1-9]\d{0,8}$/.test(index) ? Number(index) : undefined;
    const rows = wanted === undefined ? [] : await fileRecordsPage(deps.pool, tenantId, fileId,
      { afterIndex: wanted - 1, outcome: null, rowsMax: 1 });
    const row = rows[0];
    if (!row || row.index !== wanted) {
      const detail = `file ${fileId} has no record ${index}`;
      return send(reply, problemReply("FILE_RECORD_NOT_FOUND", detail));
    }
    return send(reply, jsonReply(200, fileRecordView(fileId, row)));
  });
}
