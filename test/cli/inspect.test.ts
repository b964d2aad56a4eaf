import { describe, expect, it } from "vitest";
import { runCliInProcess } from "../support/cli.ts";

describe("clearline inspect", () => {
  it("lists an ACH file's identity and each entry's natural key without a database", async () => {
    const run = await runCliInProcess(["inspect", "fixtures/ach/ppd-credits-debits.ach", "--json"], { DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" });
    expect(run.exitCode).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.format).toBe("ach");
    expect(report.identity.immediate_origin).toBe("231380104");
    expect(report.records[0]).toMatchObject({ kind: "credit", amount_minor: "125000", natural_key: "ach:23138010:231380100000001:1234567890:PPD:250305" });
  });

  it("reads an ISO 20022 message with its type from the namespace", async () => {
    const run = await runCliInProcess(["inspect", "fixtures/iso20022/pacs008-chain-a-b.xml", "--json"]);
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ format: "iso20022", message_type: "pacs.008.001.08", record_count: 1 });
  });

  it("exits 2 and names the finding and its line for a malformed file", async () => {
    const run = await runCliInProcess(["inspect", "fixtures/ach/malformed-check-digit.ach"]);
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toMatch(/error ACH_\w+ line \d+/);
  });

  it("exits 2 for a file that is neither ACH nor ISO 20022", async () => {
    const run = await runCliInProcess(["inspect", "package.json"]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/FORMAT_UNKNOWN/);
  });
});
