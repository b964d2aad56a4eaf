import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceOf } from "../../src/ledger/balance.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { correctDifference, explainDifference, listOpenDifferences, reconSuspenseAccountOf } from "../../src/recon/differences.ts";
import { importExternalFile } from "../../src/recon/external-items.ts";
import { runReconciliation } from "../../src/recon/runs.ts";
import { Prng } from "../sim/prng.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";
import { camt053, type EntrySpec } from "./statements.ts";

/**
 * Randomized, seeded: books of transfers on a settlement account, and a bank statement written
 * from them with differences planted on purpose (an entry left out, an amount off, a date too far,
 * a credit we never booked). A run must find exactly what was planted, give the same run again,
 * and once every difference that moves money is corrected (each asked for twice at once) and the
 * others explained, our settlement book must equal the bank's, with each correction posted once.
 */
const SEEDS = [1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233];
const PERIOD = { from: "2026-12-01", to: "2026-12-12" };
const none = { theirs_only: 0, ours_only: 0, amount_differs: 0, date_outside_window: 0, duplicate_on_their_side: 0, pending: 0 };
type Planted = keyof typeof none | "matched";

const decimal = (minor: bigint) => `${minor / 100n}.${String(minor % 100n).padStart(2, "0")}`;
const dayOf = (day: number) => `2026-12-${String(day).padStart(2, "0")}`;

interface Books { tenantId: string; entries: EntrySpec[]; planted: Record<Planted, number>; theirsSignedMinor: bigint }

/** Posts the seed's transfers and writes the statement the bank would send, with its planted differences. */
async function givenBooksAndStatement(db: TestDatabase, seed: number): Promise<Books> {
  const prng = new Prng(seed);
  const tenantId = `planted-${seed}`;
  await givenAccounts(db.pool, tenantId, [["settlement", "settlement"], ["alice", "customer"]]);
  const planted: Record<Planted, number> = { ...none, matched: 0 };
  const entries: EntrySpec[] = [];
  let theirsSignedMinor = 0n;
  let aliceMinor = 0n;
  const transfers = prng.int(5, 25);
  for (let i = 0; i < transfers; i++) {
    const reference = `R-${seed}-${i}`;
    const amountMinor = BigInt(prng.int(200, 50_000));
    const inward = aliceMinor < amountMinor || prng.chance(0.6);   // money out only what alice holds
    const day = prng.int(1, 3);
    const outcome = await post(db.pool, transferOf(tenantId, reference, inward ? "settlement" : "alice", inward ? "alice" : "settlement", amountMinor, { valueDate: dayOf(day) }));
    if (!outcome.ok) throw new Error(outcome.error.message);
    aliceMinor += inward ? amountMinor : -amountMinor;

    const roll = prng.next();
    const kind: Planted = roll < 0.6 ? "matched" : roll < 0.72 ? "ours_only" : roll < 0.87 ? "amount_differs" : "date_outside_window";
    planted[kind] += 1;
    if (kind === "ours_only") continue;   // the bank never booked it
    const theirMinor = kind === "amount_differs" ? amountMinor + BigInt(prng.pick([-1, 1]) * prng.int(1, 99)) : amountMinor;
    const bookedDay = kind === "date_outside_window" ? day + prng.int(5, 9) : day + prng.int(0, 2);
    entries.push({ amount: decimal(theirMinor), direction: inward ? "CRDT" : "DBIT", date: dayOf(bookedDay), svcrRef: `B-${i}`, endToEndId: reference });
    theirsSignedMinor += inward ? theirMinor : -theirMinor;
  }
  const unknown = prng.int(0, 3);
  for (let n = 0; n < unknown; n++) {
    const theirMinor = BigInt(prng.int(100, 9_999));
    entries.push({ amount: decimal(theirMinor), date: dayOf(prng.int(1, 12)), svcrRef: `X-${n}`, endToEndId: `NOT-OURS-${seed}-${n}` });
    theirsSignedMinor += theirMinor;
    planted.theirs_only += 1;
  }
  for (let i = entries.length - 1; i > 0; i--) {   // the bank's order is not ours
    const j = prng.int(0, i);
    [entries[i], entries[j]] = [entries[j] as EntrySpec, entries[i] as EntrySpec];
  }
  return { tenantId, entries, planted, theirsSignedMinor };
}

describe("reconciliation finds exactly the differences planted in random books, and corrections make our book the bank's", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it.each(SEEDS)("seed %i", async (seed) => {
    const { tenantId, entries, planted, theirsSignedMinor } = await givenBooksAndStatement(db, seed);
    const imported = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: `statement-${seed}.xml`, content: camt053({ id: `S-${seed}`, entries, date: PERIOD.to }) });
    expect(imported.ok).toBe(true);

    const run = await runReconciliation(db.pool, { tenantId, accountId: "settlement", ...PERIOD });
    const { matched, ...differences } = planted;
    expect(run).toMatchObject({ ok: true, value: { matched, differences } });
    const again = await runReconciliation(db.pool, { tenantId, accountId: "settlement", ...PERIOD });
    expect(again).toMatchObject({ ok: true, value: { runId: run.ok ? run.value.runId : "?", alreadyRun: true, matched, differences } });

    const open = await listOpenDifferences(db.pool, tenantId, "settlement", 100);
    expect(open).toHaveLength(Object.values(differences).reduce((a, b) => a + b, 0));
    for (const difference of open) {
      const decision = { tenantId, differenceId: difference.differenceId, reason: `seed ${seed}`, operator: "ops-1" };
      if (difference.deltaMinor === 0n) {
        expect(await explainDifference(db.pool, decision)).toMatchObject({ ok: true, value: { state: "explained" } });
        continue;
      }
      const both = await Promise.all([correctDifference(db.pool, decision, "2026-12-20"), correctDifference(db.pool, decision, "2026-12-20")]);
      for (const result of both) expect(result).toMatchObject({ ok: true, value: { state: "corrected", correctionKey: `recon:${difference.differenceId}` } });
    }
    expect(await listOpenDifferences(db.pool, tenantId, "settlement", 100)).toEqual([]);

    const { rows } = await db.pool.query<{ transfer_key: string; n: number }>(
      "SELECT transfer_key, count(*)::int AS n FROM transfer WHERE tenant_id = $1 AND kind = 'recon_correction' GROUP BY transfer_key", [tenantId]);
    expect(rows.map((r) => r.n).every((n) => n === 1)).toBe(true);
    expect(rows).toHaveLength(open.filter((d) => d.deltaMinor !== 0n).length);
    expect((await balanceOf(db.pool, tenantId, "settlement"))?.balanceMinor).toBe(theirsSignedMinor);
    const correctedMinor = open.reduce((sum, d) => sum + d.deltaMinor, 0n);
    const suspense = await balanceOf(db.pool, tenantId, reconSuspenseAccountOf("USD"));
    expect(suspense?.balanceMinor ?? 0n).toBe(correctedMinor);
    expect((await verifyLedger(db.pool)).problems).toEqual([]);
  });
});
