import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { startEmbeddedPostgres } from "../../src/db/embedded.ts";

async function query(url: string, sql: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

describe("the embedded PostgreSQL", () => {
  const home = mkdtempSync(path.join(tmpdir(), "clearline-embedded-"));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it("starts a real server, reuses one already running, and keeps the data across restarts", async () => {
    const first = await startEmbeddedPostgres(home);
    expect(first.owned).toBe(true);
    await query(first.url, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')");

    const second = await startEmbeddedPostgres(home);
    expect(second.owned).toBe(false);
    expect(second.url).toBe(first.url);
    await second.stop(); // not the owner: the server keeps running
    expect(await query(first.url, "SELECT v FROM kept")).toEqual([{ v: "still here" }]);

    await first.stop();
    const restarted = await startEmbeddedPostgres(home);
    try {
      expect(restarted.owned).toBe(true);
      expect(await query(restarted.url, "SELECT v FROM kept")).toEqual([{ v: "still here" }]);
    } finally {
      await restarted.stop();
    }
  });
});
