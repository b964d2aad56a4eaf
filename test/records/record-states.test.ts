import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  keyStates, recordOutcomes, reviewReasons, reviewStates,
} from "../../src/records/record-states.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

/** The values a CHECK (column IN (...)) constraint allows, read from the migrated database. */
async function allowedValues(db: TestDatabase, constraint: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ definition: string }>("SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint WHERE conname = $1", [constraint]);
  expect(rows).toHaveLength(1);
  return [...(rows[0]?.definition ?? "").matchAll(/'([a-z_]+)'::text/g)].map((m) => m[1] as string).sort();
}

describe("the record core's states are the ones the SQL checks allow", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("lists the key states of record_key", async () => {
    expect(await allowedValues(db, "record_key_state_check")).toEqual([...keyStates].sort());
  });

  it("lists the outcomes of record_outcome", async () => {
    const allowed = await allowedValues(db, "record_outcome_outcome_check");
    expect(allowed).toEqual([...recordOutcomes].sort());
  });

  it("lists the review states of record_review", async () => {
    expect(await allowedValues(db, "record_review_state_check")).toEqual([...reviewStates].sort());
  });

  it("lists the review reasons of record_review, a late return's among them", async () => {
    const allowed = await allowedValues(db, "record_review_reason_check");
    expect(allowed).toEqual([...reviewReasons].sort());
  });
});
