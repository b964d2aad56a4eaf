import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../src/db/transaction.ts";
import {
  decideReviewInTransaction, fileRecordsPage, reviewQueue, type FileRecordRow,
} from "../../src/records/index.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fixture, givenScene, ingest, PAYEE_TWO_KEY, type Scene } from "../files/support.ts";

describe("the record core's read views for the console", () => {
  let db: TestDatabase;
  let scene: Scene;
  let originalId: string;
  let correctedId: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    scene = await givenScene(db.pool, "read-views");
    originalId = (await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach")).file_id;
    correctedId = (await ingest(db.pool, scene, fixture("ach/corrected.ach"), "corrected.ach")).file_id;
  });
  afterAll(async () => {
    await db.drop();
  });

  it("pages a file's records after a cursor, each once, in file order", async () => {
    const seen: number[] = [];
    let afterIndex = 0;
    for (;;) {
      const page = await fileRecordsPage(db.pool, scene.tenantId, correctedId, { afterIndex, outcome: null, rowsMax: 2 });
      if (page.length === 0) break;
      seen.push(...page.map((row) => row.index));
      afterIndex = page.at(-1)?.index ?? afterIndex;
    }
    expect(seen).toEqual([1, 2, 3, 4, 5]);
  });

  it("names a conflict's review item and the arrival it conflicts with", async () => {
    const [conflict] = await fileRecordsPage(db.pool, scene.tenantId, correctedId, { afterIndex: 0, outcome: "conflict", rowsMax: 10 });
    expect(conflict).toMatchObject<Partial<FileRecordRow>>({
      natural_key: PAYEE_TWO_KEY, amount_minor: "20500", currency: "USD", review_state: "open",
      original_key: PAYEE_TWO_KEY, original_file_id: originalId,
    });
    expect(conflict?.review_id).toMatch(/^rev_/);
    const applied = await fileRecordsPage(db.pool, scene.tenantId, originalId, { afterIndex: 0, outcome: "applied", rowsMax: 10 });
    expect(applied.map((row) => row.original_file_id)).toEqual(applied.map(() => null));
  });

  it("shows a held record beside what its key stands for, and moves it from open to decided when decided", async () => {
    const [item] = await reviewQueue(db.pool, scene.tenantId, { state: "open" });
    expect(item).toMatchObject({
      amount_minor: "20500", held_file_name: "corrected.ach", value_date: "2025-03-05",
      standing: { amount_minor: "20000", file_id: originalId, file_name: "original.ach", value_date: "2025-03-05" },
    });
    const decided = await withTransaction(db.pool, (tx) => decideReviewInTransaction(tx, {
      tenantId: scene.tenantId, reviewId: item?.review_id ?? "", decision: "refuse", reason: "sent by mistake", operator: "ann",
    }));
    expect(decided.ok).toBe(true);
    expect(await reviewQueue(db.pool, scene.tenantId, { state: "open" })).toEqual([]);
    expect((await reviewQueue(db.pool, scene.tenantId, { state: "decided" })).map((i) => i.state)).toEqual(["refused"]);
  });
});
