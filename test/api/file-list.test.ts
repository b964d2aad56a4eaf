import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerFileRoutes } from "../../src/api/routes/files.ts";
import { limits } from "../../src/config/limits.ts";
import { createPartner } from "../../src/partners/partners.ts";
import { ApiClient } from "../support/api-client.ts";
import { givenTenant, startTestApi, type TestApi } from "../support/api-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { insertFileRecords, insertFiles } from "../support/list-fixtures.ts";
import {
  allIds, expectNotFound, expectQueriesRefused, expectStablePagingWhileItemsArrive,
} from "../support/list-walk.ts";

/**
 * Browsing files over HTTP (issue 33 item 7): GET /v1/files pages by cursor, the oldest received
 * first, filtered by status, partner, source and receipt time; GET /v1/files/{id}/records pages a
 * file's records in file order, filtered by outcome; GET /v1/files/{id}/records/{index} reads one.
 */
describe("the file list, a file's records and a record by index", () => {
  let db: TestDatabase;
  let api: TestApi;
  const fileIdOf = (item: Record<string, unknown>) => String(item.file_id);
  const indexOf = (item: Record<string, unknown>) => String(item.index);
  const tenant = async (name: string) => {
    const given = await givenTenant(db.pool, name);
    const partner = await createPartner(db.pool, given.tenantId, `${name}-bank`);
    if (!partner.ok) throw new Error(partner.error.message);
    return { ...given, partnerId: partner.value.partnerId, client: new ApiClient(api.baseUrl, given.apiKey) };
  };
  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startTestApi(db.pool, [(app) => registerFileRoutes(app, { pool: db.pool })]);
  });
  afterAll(async () => {
    await api.close();
    await db.drop();
  });

  it("pages through 10,000 files with stable cursors while new ones arrive: none twice, none that existed skipped", async () => {
    const { tenantId, partnerId, client } = await tenant("browse-files");
    const existing = await insertFiles(db.pool, { tenantId, partnerId, prefix: "fil_x", count: 10_000 });
    const path = `/v1/files?limit=${limits.http.listPageItemsMax}`;
    await expectStablePagingWhileItemsArrive(client, path, fileIdOf, existing, {
      after: (page) => insertFiles(db.pool, { tenantId, partnerId, prefix: `fil_new${page}_`, count: 1, from: new Date().toISOString() }),
      before: (page) => insertFiles(db.pool, { tenantId, partnerId, prefix: `fil_old${page}_`, count: 1, from: "2000-01-01" }),
    });
  });

  it("filters files by status", async () => {
    const { tenantId, partnerId, client } = await tenant("files-status");
    await insertFiles(db.pool, { tenantId, partnerId, prefix: "fil_s", count: 20 });
    expect(await allIds(client, "/v1/files?status=rejected", fileIdOf)).toEqual(["fil_s00010", "fil_s00020"]);
  });

  it("filters files by partner, named by its name or its id", async () => {
    const { tenantId, partnerId, client } = await tenant("files-partner");
    const other = await createPartner(db.pool, tenantId, "other-bank");
    if (!other.ok) throw new Error(other.error.message);
    await insertFiles(db.pool, { tenantId, partnerId, prefix: "fil_a", count: 2 });
    await insertFiles(db.pool, { tenantId, partnerId: other.value.partnerId, prefix: "fil_b", count: 2 });
    expect(await allIds(client, "/v1/files?partner=other-bank", fileIdOf)).toEqual(["fil_b00001", "fil_b00002"]);
    expect(await allIds(client, `/v1/files?partner=${partnerId}`, fileIdOf)).toEqual(["fil_a00001", "fil_a00002"]);
    expect(await allIds(client, "/v1/files?partner=no-such-bank", fileIdOf)).toEqual([]);
  });

  it("filters files by source", async () => {
    const { tenantId, partnerId, client } = await tenant("files-source");
    await insertFiles(db.pool, { tenantId, partnerId, prefix: "fil_s", count: 4 });
    expect(await allIds(client, "/v1/files?source=sftp", fileIdOf)).toEqual(["fil_s00002", "fil_s00004"]);
  });

  it("filters files by receipt time", async () => {
    const { tenantId, partnerId, client } = await tenant("files-received");
    await insertFiles(db.pool, { tenantId, partnerId, prefix: "fil_a", count: 1, from: "2026-06-01T08:00:00Z" });
    await insertFiles(db.pool, { tenantId, partnerId, prefix: "fil_b", count: 1, from: "2026-06-02T08:00:00Z" });
    expect(await allIds(client, "/v1/files?created_from=2026-06-02", fileIdOf)).toEqual(["fil_b00001"]);
    expect(await allIds(client, "/v1/files?created_before=2026-06-02", fileIdOf)).toEqual(["fil_a00001"]);
  });

  it("refuses a cursor it did not give out, a limit out of bounds and an unknown status or source, with 400", async () => {
    const { client } = await tenant("files-refusals");
    await expectQueriesRefused(client, "/v1/files", ["cursor=bm90LWEtY3Vyc29y", `limit=${limits.http.listPageItemsMax + 1}`, "status=lost", "source=fax"]);
  });

  it("reads one file with every field of its list item, and answers 404 for an unknown id and for another tenant's", async () => {
    const mine = await tenant("files-mine");
    const theirs = await tenant("files-theirs");
    await insertFiles(db.pool, { tenantId: mine.tenantId, partnerId: mine.partnerId, prefix: "fil_m", count: 1 });
    await insertFiles(db.pool, { tenantId: theirs.tenantId, partnerId: theirs.partnerId, prefix: "fil_t", count: 1 });
    const listed = (await mine.client.get("/v1/files")).json.data[0];
    const read = await mine.client.get("/v1/files/fil_m00001");
    expect(read.status).toBe(200);
    // The file's own document is its list item and more: its records' outcomes, a correction's drops.
    expect(read.json).toMatchObject(listed);
    expect(listed).toMatchObject({ file_id: "fil_m00001", partner: "files-mine-bank", status: "done" });
    await expectNotFound(mine.client, ["fil_nobody", "fil_t00001"].map((id) => `/v1/files/${id}`), "file_not_found");
  });

  it("pages through a file's 10,000 records in file order while more are recorded: none twice, none skipped", async () => {
    const { tenantId, partnerId, client } = await tenant("browse-records");
    const [fileId = ""] = await insertFiles(db.pool, { tenantId, partnerId, prefix: "fil_r", count: 1 });
    const existing = (await insertFileRecords(db.pool, { tenantId, fileId, first: 1, count: 10_000 })).map(String);
    let next = 10_001;
    const path = `/v1/files/${fileId}/records?limit=${limits.http.listPageItemsMax}`;
    await expectStablePagingWhileItemsArrive(client, path, indexOf, existing, {
      // The file goes on being processed: its next records are recorded between pages.
      after: async () => {
        const added = await insertFileRecords(db.pool, { tenantId, fileId, first: next, count: 7 });
        next += 7;
        return added.map(String);
      },
    });
  });

  it("filters a file's records by outcome", async () => {
    const { tenantId, partnerId, client } = await tenant("records-outcome");
    const [fileId = ""] = await insertFiles(db.pool, { tenantId, partnerId, prefix: "fil_o", count: 1 });
    await insertFileRecords(db.pool, { tenantId, fileId, first: 1, count: 25 });
    expect(await allIds(client, `/v1/files/${fileId}/records?outcome=duplicate&limit=1`, indexOf)).toEqual(["10", "20"]);
  });

  it("refuses a cursor of another file's records with 400, and lists no records of an unknown file (404)", async () => {
    const { tenantId, partnerId, client } = await tenant("records-cursor");
    const [one = "", two = ""] = await insertFiles(db.pool, { tenantId, partnerId, prefix: "fil_c", count: 2 });
    await insertFileRecords(db.pool, { tenantId, fileId: one, first: 1, count: 3 });
    const cursor = (await client.get(`/v1/files/${one}/records?limit=1`)).json.next_cursor as string;
    const crossed = await client.get(`/v1/files/${two}/records?cursor=${cursor}`);
    expect(crossed.status).toBe(400);
    expect(crossed.json.code).toBe("request_invalid");
    const unknown = await client.get("/v1/files/fil_nobody/records");
    expect(unknown.status).toBe(404);
    expect(unknown.json.code).toBe("file_not_found");
  });

  it("reads one record by its index in the shape of its list item, and answers 404 past the last and for another tenant's file", async () => {
    const mine = await tenant("record-mine");
    const theirs = await tenant("record-theirs");
    const [fileId = ""] = await insertFiles(db.pool, { tenantId: mine.tenantId, partnerId: mine.partnerId, prefix: "fil_i", count: 1 });
    const [otherFile = ""] = await insertFiles(db.pool, { tenantId: theirs.tenantId, partnerId: theirs.partnerId, prefix: "fil_j", count: 1 });
    await insertFileRecords(db.pool, { tenantId: mine.tenantId, fileId, first: 1, count: 3 });
    await insertFileRecords(db.pool, { tenantId: theirs.tenantId, fileId: otherFile, first: 1, count: 3 });
    const listed = (await mine.client.get(`/v1/files/${fileId}/records`)).json.data[1];
    const read = await mine.client.get(`/v1/files/${fileId}/records/2`);
    expect(read.status).toBe(200);
    expect(read.json).toEqual(listed);
    expect(read.json).toMatchObject({ file_id: fileId, index: 2, position: "line 4", outcome: "applied", review: null });
    await expectNotFound(mine.client, ["4", "0", "two"].map((index) => `/v1/files/${fileId}/records/${index}`), "file_record_not_found");
    const foreign = await mine.client.get(`/v1/files/${otherFile}/records/1`);
    expect(foreign.status).toBe(404);
    expect(foreign.json.code).toBe("file_not_found");
  });
});
