import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAccount } from "../../src/ledger/accounts.ts";
import { parseAch } from "../../src/protocols/ach/reader.ts";
import { achFixtureDated } from "../files/support.ts";
import { runCli } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";


// As an operator types it (black-box: a real `clearline` process).
describe("clearline partner returns list|cut", () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url, CLEARLINE_HOME: mkdtempSync(path.join(tmpdir(), "clearline-returns-cli-")) };
    const tenant = JSON.parse((await runCli(["tenant", "add", "acme", "--json"], env)).stdout) as { tenant_id: string };
    expect((await runCli(["partner", "add", "--tenant", "acme", "fedach"], env)).exitCode).toBe(0);
    // ALAN TURING's account is empty: the file's 980.50 debit of it is refused (R01).
    await openAccount(db.pool, { tenantId: tenant.tenant_id, accountId: "turing", kind: "customer", currency: "USD" });
    expect((await runCli(["alias", "add", "aba:021000021:9876543", "--tenant", "acme", "--account", "turing"], env)).exitCode).toBe(0);
    // Dated Wednesday 31 December 2098: its return at the 2099 cut-off is in time (decision 0094).
    const dated = path.join(env.CLEARLINE_HOME ?? "", "base-valid.ach");
    writeFileSync(dated, achFixtureDated("ach/base-valid.ach", "981231"));
    expect((await runCli(["ingest", dated, "--tenant", "acme", "--partner", "fedach"], env)).exitCode).toBe(0);
  }, 60_000);
  afterAll(async () => { await db.drop(); });

  it("lists the refused debit as a pending R01 return", async () => {
    const run = await runCli(["partner", "returns", "list", "--tenant", "acme", "--partner", "fedach", "--json"], env);
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject([{ line: 4, reason_code: "R01" }]);
  });

  it("cuts it into a return file at the cut-off, then has nothing left to cut", async () => {
    const cut = await runCli(["partner", "returns", "cut", "--tenant", "acme", "--partner", "fedach", "--cutoff", "2099-01-01T15:00:00Z", "--json"], env);
    expect(cut.exitCode).toBe(0);
    expect(JSON.parse(cut.stdout)).toMatchObject({ kind: "cut", entries: 1, file_name: "returns-20990101T150000Z.ach" });
    const { rows } = await db.pool.query<{ content: Buffer }>("SELECT content FROM partner_outbound_file WHERE kind = 'ach.return-file'");
    expect(parseAch(rows[0]?.content ?? "").batches.flatMap((b) => b.entries.map((e) => e.addenda[0]?.fields.returnReasonCode))).toEqual(["R01"]);
    const again = await runCli(["partner", "returns", "cut", "--tenant", "acme", "--partner", "fedach", "--json"], env);
    expect(JSON.parse(again.stdout)).toMatchObject({ kind: "empty" });
  });

  it("refuses an unknown partner and a cut-off that is not a time, exit 2", async () => {
    expect((await runCli(["partner", "returns", "cut", "--tenant", "acme", "--partner", "nobody"], env)).exitCode).toBe(2);
    expect((await runCli(["partner", "returns", "cut", "--tenant", "acme", "--partner", "fedach", "--cutoff", "tomorrow"], env)).exitCode).toBe(2);
  });
});
