import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balancesOnDate } from "../../src/ledger/index.ts";
import { CamtStatementReader } from "../../src/protocols/statement/camt-reader.ts";
import type {
  ExternalItem, ExternalStatementHead,
} from "../../src/protocols/statement/external-item.ts";
import type { Finding } from "../../src/errors/finding.ts";
import { runCliInProcess } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import {
  achFixtureDated, givenScene, ingest, ppdCreditsDebitsDated, settlementOf, suspenseOf,
  type Scene,
} from "../files/support.ts";

/**
 * `clearline statement camt053` (issue 30 item 5), read back by the reader `recon import` uses:
 * ppd-credits-debits.ach effective Friday 4 December 2026 (credits and debits), original.ach
 * effective Saturday 5 December (five credits that settle Monday 7 December).
 */
function read(xml: Buffer): { items: ExternalItem[]; head: ExternalStatementHead;
  findings: Finding[] } {
  const reader = new CamtStatementReader({ itemsMax: 1_000, partsPerItemMax: 10, findingsMax: 10 });
  const events = [...reader.push(xml), ...reader.finish()];
  const end = events.find((e) => e.type === "end");
  if (end?.type !== "end") throw new Error("the reader ended without its end event");
  return {
    items: events.flatMap((e) => (e.type === "item" ? [e.item] : [])),
    head: end.head, findings: end.findings,
  };
}

describe("an account's end-of-day statement as camt.053, read back by our own reader", () => {
  let db: TestDatabase;
  let scene: Scene;
  let dir: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(path.join(tmpdir(), "clearline-camt053-"));
    scene = await givenScene(db.pool, "camt");
    const friday = await ingest(db.pool, scene, ppdCreditsDebitsDated("261204"), "friday.ach");
    expect(friday.outcomes).toMatchObject({ applied: 6, suspect: 0 });
    await ingest(db.pool, scene, achFixtureDated("ach/original.ach", "261205"), "saturday.ach");
  });
  afterAll(async () => { await db.drop(); });

  async function statementOf(account: string, date: string): Promise<Buffer> {
    const out = path.join(dir, `${account}-${date}.xml`);
    const run = await runCliInProcess(["statement", "camt053", "--tenant", "camt",
      "--account", account, "--date", date, "--out", out, "--json"], { DATABASE_URL: db.url });
    expect(run.stderr).toBe("");
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ account, date, out });
    return readFileSync(out);
  }

  /** The day's entries as the ledger holds them, signed for the account's holder. */
  async function ledgerEntries(account: string, date: string, normalSide: "D" | "C") {
    const { rows } = await db.pool.query<{ entry_key: string; direction: "D" | "C";
      amount_minor: string; settles: string; }>(
      `SELECT e.entry_key, e.direction, e.amount_minor::text,
              to_char(coalesce(t.settlement_date, t.value_date), 'YYYY-MM-DD') AS settles
         FROM ledger_entry e
         JOIN transfer t ON t.tenant_id = e.tenant_id AND t.transfer_key = e.transfer_key
        WHERE e.tenant_id = $1 AND e.account_id = $2 AND e.value_date = $3::date
        ORDER BY e.entry_key`, [scene.tenantId, account, date]);
    return rows.map((r) => ({
      description: r.entry_key, direction: r.direction === normalSide ? "C" : "D",
      amountMinor: BigInt(r.amount_minor), bookingDate: date, valueDate: r.settles,
    }));
  }

  const cases: Array<[string, (s: Scene) => string, "D" | "C", string, string]> = [
    ["a settlement account on Friday (credits and debits)", settlementOf, "D", "2026-12-04",
      "2026-12-03"],
    ["a settlement account on Saturday (settling Monday)", settlementOf, "D", "2026-12-05",
      "2026-12-04"],
    ["a suspense account on Saturday", suspenseOf, "C", "2026-12-05", "2026-12-04"],
  ];
  it.each(cases)("holds the same entries and booked balances as the ledger: %s",
    async (_name, accountOf, normalSide, date, dayBefore) => {
      const account = accountOf(scene);
      const { items, head, findings } = read(await statementOf(account, date));
      expect(findings).toEqual([]);
      const expected = await ledgerEntries(account, date, normalSide);
      expect(expected.length).toBeGreaterThan(0);
      if (date === "2026-12-04") {
        expect(new Set(expected.map((e) => e.direction))).toEqual(new Set(["C", "D"]));
      }
      expect(items.map((item) => ({
        description: item.description, direction: item.direction,
        amountMinor: item.amountMinor, bookingDate: item.bookingDate, valueDate: item.valueDate,
      })).sort((x, y) => String(x.description).localeCompare(String(y.description))))
        .toEqual(expected);
      expect(items.every((item) => item.currency === "USD" && item.status === "booked"))
        .toBe(true);
      const opening = await balancesOnDate(db.pool, scene.tenantId, account, dayBefore);
      const closing = await balancesOnDate(db.pool, scene.tenantId, account, date);
      expect(head).toMatchObject({ currency: "USD", openingMinor: opening?.bookedMinor,
        closingMinor: closing?.bookedMinor });
    });

  it("gives Saturday's entries Monday as their value date, their settlement date", async () => {
    const { items } = read(await statementOf(settlementOf(scene), "2026-12-05"));
    expect(items.map((item) => [item.bookingDate, item.valueDate, item.direction]))
      .toEqual(items.map(() => ["2026-12-05", "2026-12-07", "C"]));
    expect(items.map((item) => item.amountMinor))
      .toEqual([10_000n, 20_000n, 30_000n, 40_000n, 50_000n]);
  });

  it("writes a statement of a day without entries: opening and closing alike", async () => {
    const { items, head } = read(await statementOf(settlementOf(scene), "2026-12-06"));
    expect(items).toEqual([]);
    expect(head.openingMinor).toBe(head.closingMinor);
  });

  it("exits 2 naming an account that does not exist", async () => {
    const run = await runCliInProcess(["statement", "camt053", "--tenant", "camt",
      "--account", "nobody", "--date", "2026-12-05"], { DATABASE_URL: db.url });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("ACCOUNT_NOT_FOUND");
  });
});
