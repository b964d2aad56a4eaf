import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliInProcess } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { noOutcomes } from "./support.ts";

const fixtures = fileURLToPath(new URL("../../fixtures/ach/", import.meta.url));
const fixture = (name: string) => path.join(fixtures, name);

// The operations commands, as a person types them: the command's function run in-process (the
// process itself, exit codes on a closed pipe and the like, is test/cli/manners.test.ts's).
describe("clearline partner, ingest, files, file show and review", () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url, CLEARLINE_HOME: mkdtempSync(path.join(tmpdir(), "clearline-ingest-cli-")) };
    expect((await runCliInProcess(["tenant", "add", "acme"], env)).exitCode).toBe(0);
  });
  afterAll(async () => { await db.drop(); });

  it("creates a clearing partner with its settlement and suspense accounts", async () => {
    const run = await runCliInProcess(["partner", "add", "--tenant", "acme", "fedach", "--json"], env);
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ name: "fedach", settlement_account: "partner.fedach.settlement.USD", suspense_account: "partner.fedach.suspense.USD" });
  });

  it("ingests a file and prints one JSON object with its outcomes, exit 0", async () => {
    const run = await runCliInProcess(["ingest", fixture("original.ach"), "--tenant", "acme", "--json"], env);
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ name: "original.ach", format: "ach", status: "done", records: 5, outcomes: { ...noOutcomes, applied: 5 }, errors: [], warnings: [] });
  });

  it("shows with --dry-run what the corrected file would do, without posting", async () => {
    const run = await runCliInProcess(["ingest", fixture("corrected.ach"), "--tenant", "acme", "--partner", "fedach", "--dry-run", "--json"], env);
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: "would_apply", verdicts: { new: 1, already_applied: 3, changed: 1, suspect: 0, rejected: 0 } });
    const { rows } = await db.pool.query<{ n: bigint }>("SELECT count(*) AS n FROM received_file");
    expect(rows[0]?.n).toBe(1n);
  });

  it("applies the corrected file's new record and lists its changed one for review", async () => {
    const run = await runCliInProcess(["ingest", fixture("corrected.ach"), "--tenant", "acme", "--json"], env);
    expect(JSON.parse(run.stdout)).toMatchObject({ outcomes: { ...noOutcomes, applied: 1, duplicate: 3, conflict: 1 } });
    const listed = await runCliInProcess(["review", "list", "--tenant", "acme", "--json"], env);
    const items = (JSON.parse(listed.stdout) as { reviews: Array<{ review_id: string; reason: string; amount_minor: string; position: string }> }).reviews;
    expect(items).toMatchObject([{ reason: "conflict", amount_minor: "20500", position: "line 4" }]);
  });

  const heldReviewId = async () => (await db.pool.query<{ review_id: string }>(
    `SELECT review_id FROM record_review`)).rows[0]?.review_id ?? "";

  it("refuses review release with exit 2, naming the three decisions", async () => {
    const released = await runCliInProcess(["review", "release", await heldReviewId(), "--reason", "partner confirmed the new amount"], env);
    expect(released.exitCode).toBe(2);
    const ways = /REVIEW_RELEASE_REMOVED.*review replace.*review apply-as-new.*review refuse/;
    expect(released.stderr).toMatch(ways);
  });

  it("replaces the changed record, printing what it posted; a repeat answers the stored decision", async () => {
    const id = await heldReviewId();
    const replaced = await runCliInProcess(["review", "replace", id, "--reason", "partner confirmed the new amount", "--operator", "ops-1"], env);
    expect(replaced.exitCode).toBe(0);
    expect(replaced.stdout).toBe(`${id}: replaced by ops-1: ach:23138010:231380100000002:1234567890:PPD:250305:post compensated by ach:23138010:231380100000002:1234567890:PPD:250305:post:compensate; corrected record posted as ach:23138010:231380100000002:1234567890:PPD:250305:replace:${id}\n`);
    const again = await runCliInProcess(["review", "replace", id, "--reason", "once more", "--json"], env);
    expect(JSON.parse(again.stdout)).toMatchObject({ state: "replaced", operator: "ops-1", reason: "partner confirmed the new amount" });
  });

  it("refuses another decision on the replaced record with exit 2, naming the first", async () => {
    const refused = await runCliInProcess(["review", "refuse", await heldReviewId(), "--reason", "changed my mind"], env);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/REVIEW_DECIDED: .*already decided: replace by ops-1/);
  });

  it("shows the compensation and the corrected posting in the statement as technical corrections, and ledger verify is clean", async () => {
    const statement = await runCliInProcess(["statement", "--tenant", "acme", "--account", "partner.fedach.suspense.USD"], env);
    expect(statement.stdout).toMatch(/correction-compensation\s+\[technical correction\] {2}ach:23138010:231380100000002:1234567890:PPD:250305:post:compensate {2}from review:rev_/);
    expect(statement.stdout).toMatch(/correction-replacement\s+\[technical correction\]/);
    const verify = await runCliInProcess(["ledger", "verify"], env);
    expect(verify.exitCode).toBe(0);
  });

  it("exits 2 for a rejected file and lists it under files --status rejected with its finding's line", async () => {
    const run = await runCliInProcess(["ingest", fixture("malformed-trace-order.ach"), "--tenant", "acme", "--json"], env);
    expect(run.exitCode).toBe(2);
    const report = JSON.parse(run.stdout) as { file_id: string };
    expect(report).toMatchObject({ status: "rejected", errors: [{ code: "ACH_TRACE_NOT_ASCENDING", line: 5 }] });
    const files = await runCliInProcess(["files", "--status", "rejected", "--json"], env);
    expect((JSON.parse(files.stdout) as { files: Array<{ file_id: string }> }).files.map((f) => f.file_id)).toEqual([report.file_id]);
  });

  it("shows a file's per-record outcomes with their positions", async () => {
    const { files } = JSON.parse((await runCliInProcess(["files", "--tenant", "acme", "--status", "done", "--json"], env)).stdout) as { files: Array<{ file_id: string; name: string }> };
    const corrected = files.find((f) => f.name === "corrected.ach");
    const shown = await runCliInProcess(["file", "show", corrected?.file_id ?? "", "--json"], env);
    const outcomes = (JSON.parse(shown.stdout) as { record_outcomes: Array<{ position: string; outcome: string }> }).record_outcomes;
    expect(outcomes.map((o) => `${o.position} ${o.outcome}`)).toEqual(["line 3 duplicate", "line 4 conflict", "line 7 duplicate", "line 8 duplicate", "line 9 applied"]);
  });

  it("refuses an unknown tenant with exit 2 and the code", async () => {
    const file = path.join(env.CLEARLINE_HOME ?? "", "x.ach");
    writeFileSync(file, "101");
    const run = await runCliInProcess(["ingest", file, "--tenant", "nobody"], env);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/TENANT_UNKNOWN/);
  });
});
