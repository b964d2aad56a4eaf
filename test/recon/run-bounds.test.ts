import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { limits } from "../../src/config/limits.ts";
import { importExternalFile } from "../../src/recon/external-items.ts";
import { matchingRules } from "../../src/recon/matching-rules.ts";
import { runReconciliation } from "../../src/recon/runs.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenAccounts, post, transferOf } from "../support/ledger-fixtures.ts";
import { camt053 } from "./statements.ts";

// What the set-based pairing leaves goes to the in-memory matcher, about 1.4 KB each: a run that
// would leave more than limits.recon.runLeftoversMax is refused before any of it is read.

describe("a run's leftovers are bounded", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("refuses a run whose unpaired items and transfers exceed the bound, naming both, and stores nothing", async () => {
    const tenantId = "leftovers-1";
    await givenAccounts(db.pool, tenantId, [["settlement", "settlement"], ["alice", "customer"]]);
    // One pair, and three things that pair with nothing: two of their entries, one of our transfers.
    for (const key of ["W1", "W2"]) {
      const outcome = await post(db.pool, transferOf(tenantId, key, "settlement", "alice", 1_000n, { valueDate: "2026-12-01" }));
      if (!outcome.ok) throw new Error(outcome.error.message);
    }
    const imported = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: "s.xml", content: camt053({ id: "LO1", entries: [
      { amount: "10.00", date: "2026-12-01", svcrRef: "B1", endToEndId: "W1" },
      { amount: "11.00", date: "2026-12-01", svcrRef: "B2", endToEndId: "NOBODY-1" },
      { amount: "12.00", date: "2026-12-01", svcrRef: "B3", endToEndId: "NOBODY-2" },
    ] }) });
    if (!imported.ok) throw new Error(JSON.stringify(imported.error));

    const refused = await runReconciliation(db.pool, { tenantId, accountId: "settlement", from: "2026-12-01", to: "2026-12-01" }, matchingRules, { ...limits.recon, runLeftoversMax: 2 });
    expect(!refused.ok && refused.error.code).toBe("RECON_RUN_LEFTOVERS_TOO_MANY");
    expect(!refused.ok && refused.error.message).toMatch(/^3 items and transfers .* \(2 theirs, 1 ours\); the in-memory matcher takes at most 2:/);
    const stored = await db.pool.query("SELECT (SELECT count(*) FROM recon_run WHERE tenant_id = $1)::int AS runs, (SELECT count(*) FROM recon_difference WHERE tenant_id = $1)::int AS differences", [tenantId]);
    expect(stored.rows).toEqual([{ runs: 0, differences: 0 }]);

    const within = await runReconciliation(db.pool, { tenantId, accountId: "settlement", from: "2026-12-01", to: "2026-12-01" }, matchingRules, { ...limits.recon, runLeftoversMax: 3 });
    expect(within.ok && [within.value.matched, within.value.differences.theirs_only, within.value.differences.ours_only]).toEqual([1, 2, 1]);
  });
});
