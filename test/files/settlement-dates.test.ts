import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configuredCalendar } from "../../src/config/calendar-closings-config.ts";
import { calendarDateOf } from "../../src/protocols/calendars/index.ts";
import { fileOutcomes } from "../../src/files/report.ts";
import { balancesOnDate } from "../../src/ledger/index.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { achFixtureDated, givenScene, ingest, settlementOf, type Scene } from "../files/support.ts";

/**
 * original.ach (five entries, 1,500.00 net to the partner's settlement account) with another effective entry date and another
 * file creation date and time (file header positions 24-29 and 30-33): the settlement date of
 * every transfer it posts (docs/decisions/0101).
 */
function originalDated(effective: string, created: string, time: string): Buffer {
  const lines = achFixtureDated("ach/original.ach", effective).toString("latin1").split("\n");
  const header = lines[0] ?? "";
  lines[0] = `${header.slice(0, 23)}${created}${time}${header.slice(33)}`;
  return Buffer.from(lines.join("\n"), "latin1");
}

describe("ACH settlement dates through ingestion, against the Federal Reserve's calendar", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  async function settlementDates(scene: Scene): Promise<string[]> {
    const { rows } = await db.pool.query<{ d: string }>(
      `SELECT DISTINCT to_char(settlement_date, 'YYYY-MM-DD') AS d FROM transfer
        WHERE tenant_id = $1 ORDER BY d`, [scene.tenantId]);
    return rows.map((r) => r.d);
  }

  it("settles a file effective on a Saturday on the Monday after", async () => {
    const scene = await givenScene(db.pool, "settle-saturday");
    await ingest(db.pool, scene, originalDated("261205", "261204", "1015"), "saturday.ach");
    expect(await settlementDates(scene)).toEqual(["2026-12-07"]);
  });

  it("skips a Federal Reserve holiday: a file effective on Christmas Day settles the Monday after", async () => {
    const scene = await givenScene(db.pool, "settle-christmas");
    await ingest(db.pool, scene, originalDated("261225", "261223", "1015"), "christmas.ach");
    expect(await settlementDates(scene)).toEqual(["2026-12-28"]);
  });

  it("settles a same-day file (effective the day it was created, before 16:45) that day", async () => {
    const scene = await givenScene(db.pool, "settle-same-day");
    await ingest(db.pool, scene, originalDated("261203", "261203", "1015"), "same-day.ach");
    expect(await settlementDates(scene)).toEqual(["2026-12-03"]);
  });

  it("names each applied record's settlement date in the file's report", async () => {
    const scene = await givenScene(db.pool, "settle-report");
    const report = await ingest(db.pool, scene, originalDated("261205", "261204", "1015"), "report.ach");
    const outcomes = await fileOutcomes(db.pool, scene.tenantId, report.file_id);
    expect(outcomes.length).toBe(5);
    expect(outcomes.map((o) => [o.outcome, o.settlement_date]))
      .toEqual(outcomes.map(() => ["applied", "2026-12-07"]));
  });

  it("books the Saturday file's money on Saturday and settles it on Monday", async () => {
    const scene = await givenScene(db.pool, "settle-balances");
    await ingest(db.pool, scene, originalDated("261205", "261204", "1015"), "balances.ach");
    const on = (day: string) => balancesOnDate(db.pool, scene.tenantId, settlementOf(scene), day);
    expect(await on("2026-12-05")).toMatchObject({ bookedMinor: 150_000n, settledMinor: 0n });
    expect(await on("2026-12-07")).toMatchObject({ bookedMinor: 150_000n, settledMinor: 150_000n });
  });
});

describe("ACH settlement dates on the partner's calendar", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("rolls past an unscheduled closing configured on the partner's calendar", async () => {
    const monday = calendarDateOf("2026-12-07");
    if (!monday.ok) throw new Error(monday.error.message);
    const closed = configuredCalendar("us-federal-reserve", {
      calendarClosings: [{ calendar: "us-federal-reserve", date: monday.value, reason: "test" }],
    });
    if (!closed.ok) throw new Error(closed.error.message);
    const scene = await givenScene(db.pool, "settle-partner-calendar");
    await ingest(db.pool, scene, originalDated("261205", "261204", "1015"), "closed-monday.ach",
      { achCalendar: closed.value });
    const { rows } = await db.pool.query<{ d: string }>(
      `SELECT DISTINCT to_char(settlement_date, 'YYYY-MM-DD') AS d FROM transfer
        WHERE tenant_id = $1`, [scene.tenantId]);
    expect(rows).toEqual([{ d: "2026-12-08" }]);
  });
});
