import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dryRun } from "../../src/files/dry-run.ts";
import { setField } from "../protocols/ach/support.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fixture, givenScene, ingest, type Scene } from "./support.ts";

// Issue 30 item 6: a return file that reused its forward file's header (as some processors do)
// was reported as a correction of the forward, listing the forward's entries as "in the
// original, absent from the correction", while its record was rightly linked as a return.
// return-keeps-forward-trace-and-code.ach returns original.ach's first entry (docs: fixtures).

const fileCreationTimeColumn = 30;
const individualNameColumn = 55;

function lines(name: string): string[] {
  return fixture(`ach/${name}`).toString("latin1").split("\n");
}

function bytes(fileLines: string[]): Buffer {
  return Buffer.from(fileLines.join("\n"), "latin1");
}

/** The return of original.ach's first entry, under original.ach's own file header. */
function returnUnderForwardHeader(): Buffer {
  const returned = lines("return-keeps-forward-trace-and-code.ach");
  returned[0] = lines("original.ach")[0]!;
  return bytes(returned);
}

describe("a return file is never a correction of a forward file", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  const given = async (name: string): Promise<{ scene: Scene; forwardId: string }> => {
    const scene = await givenScene(db.pool, name);
    const forward = await ingest(db.pool, scene, fixture("ach/original.ach"), "forward.ach");
    return { scene, forwardId: forward.file_id };
  };

  it("is not a correction of the forward whose header it repeats; drops nothing", async () => {
    const { scene } = await given("same-header");
    const returned = await ingest(db.pool, scene, returnUnderForwardHeader(), "return.ach");
    expect(returned.outcomes).toMatchObject({ applied: 1, orphan: 0 });
    expect(returned).toMatchObject({ correction_of: null, dropped_records: null });
  });

  it("is not named a correction by the dry run either", async () => {
    const { scene } = await given("dry-run");
    const content = returnUnderForwardHeader();
    const report = await dryRun(db.pool, scene.tenantId, async function* () { yield content; },
      { name: "return.ach" });
    expect(report).toMatchObject({ correction_of: null, dropped_records: null });
  });

  it("leaves a forward re-sent under that header correcting the forward", async () => {
    const { scene, forwardId } = await given("forward-again");
    // the return under the same header arrives in between: the latest file of that identity
    await ingest(db.pool, scene, returnUnderForwardHeader(), "return.ach");
    const corrected = lines("original.ach");
    corrected[3] = setField(corrected[3]!, individualNameColumn, "PAYEE 2  ");
    const again = await ingest(db.pool, scene, bytes(corrected), "forward-corrected.ach");
    expect(again.correction_of).toBe(forwardId);
  });

  it("leaves a return file re-sent under that header correcting the first return", async () => {
    const { scene } = await given("return-again");
    const first = await ingest(db.pool, scene, returnUnderForwardHeader(), "return.ach");
    const resent = returnUnderForwardHeader().toString("latin1").split("\n");
    resent[3] = setField(resent[3]!, 4, "R04");    // the addenda's return reason
    const again = await ingest(db.pool, scene, bytes(resent), "return-corrected.ach");
    expect(again.correction_of).toBe(first.file_id);
  });

  it("is not the correction of a forward file with another creation time", async () => {
    const { scene } = await given("other-time");
    const returned = await ingest(db.pool, scene,
      fixture("ach/return-keeps-forward-trace-and-code.ach"), "return.ach");
    expect(returned).toMatchObject({ status: "done", correction_of: null, dropped_records: null });
  });

  it("leaves two forwards of one originator, other times and entries, unrelated", async () => {
    const { scene } = await given("two-forwards");
    const later = lines("original.ach");
    later[0] = setField(later[0]!, fileCreationTimeColumn, "1200");
    // other trace numbers (sequence at 88-94, still ascending), so no natural key repeats
    for (const at of [2, 3, 4, 7, 8]) later[at] = setField(later[at]!, 88, `100000${at}`);
    const second = await ingest(db.pool, scene, bytes(later), "later.ach");
    expect(second).toMatchObject({ status: "done", correction_of: null, dropped_records: null });
    // the same payments under other keys: held as suspects, not repeats
    expect(second.outcomes).toMatchObject({ suspect: 5, rejected: 0 });
  });
});
