import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

// Found by the soak (docs/operations/soak.md): a 2-second reset partition between serve and
// PostgreSQL stopped serve with "Unhandled 'error' event" from a pool client that was checked out
// when its connection broke (pg-pool takes its own error listener off a client it hands out).
describe("the database pool", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it("survives the connection of a checked-out client breaking: its query fails, the process goes on", async () => {
    const client = await db.pool.connect();
    const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    const pid = rows[0]?.pid;
    expect(client.listenerCount("error")).toBeGreaterThan(0);
    const broken = new Promise<void>((resolve) => client.once("end", () => resolve()));
    await db.pool.query("SELECT pg_terminate_backend($1)", [pid]);
    await broken;
    await expect(client.query("SELECT 1")).rejects.toThrow();
    client.release(true);
    const after = await db.pool.query<{ one: number }>("SELECT 1 AS one");
    expect(after.rows[0]?.one).toBe(1);
  });
});
