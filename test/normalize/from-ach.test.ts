import { describe, expect, it } from "vitest";
import { AchContentHash, achEntryToCanonical, achFileIdentity, achLinkKey } from "../../src/normalize/from-ach.ts";
import type { CanonicalRecord } from "../../src/normalize/canonical-record.ts";
import { parseAch } from "../../src/protocols/ach/reader.ts";
import { file, fixture, linesOf, setField } from "../protocols/ach/support.ts";

function records(bytes: Buffer): CanonicalRecord[] {
  const parsed = parseAch(bytes);
  return parsed.batches.flatMap((b) => b.entries).map((entry) => {
    const result = achEntryToCanonical(entry, { tenantId: "t1", fileId: "f1", ...(parsed.fileHeader ? { fileHeader: parsed.fileHeader } : {}) });
    if (!result.ok) throw new Error(result.error.message);
    return result.value;
  });
}

/** First record of each trace (a trace is unique only within its batch). */
function byTrace(list: CanonicalRecord[]): Map<string, CanonicalRecord> {
  const map = new Map<string, CanonicalRecord>();
  for (const r of list) if (!map.has(r.attributes.traceNumber ?? "")) map.set(r.attributes.traceNumber ?? "", r);
  return map;
}

describe("ACH entry -> CanonicalRecord", () => {
  it("keys an entry by ODFI, trace, company id, SEC and effective entry date", () => {
    const [first] = records(fixture("base-valid.ach"));
    expect(first?.naturalKey).toBe("ach:23138010:231380100000001:1234567890:PPD:250305");
    expect(first?.channel).toBe("ach");
    expect(first?.source).toEqual({ fileId: "f1", position: "line 3" });
  });

  it("carries the amount as bigint minor units, the kind from the transaction code and the value date", () => {
    const list = records(fixture("base-valid.ach"));
    expect(list.map((r) => [r.kind, r.amount, r.currency, r.valueDate])).toEqual([
      ["credit", 125000n, "USD", "2025-03-05"], ["debit", 98050n, "USD", "2025-03-05"], ["credit", 4500n, "USD", "2025-03-05"],
    ]);
  });

  it("keeps key and fingerprint when a corrected file renumbers its batches", () => {
    const original = byTrace(records(fixture("original.ach")));
    const corrected = byTrace(records(fixture("corrected.ach")));
    const one = "231380100000001";
    expect(corrected.get(one)?.naturalKey).toBe(original.get(one)?.naturalKey);
    expect(corrected.get(one)?.fingerprint).toBe(original.get(one)?.fingerprint);
    expect(corrected.get(one)?.attributes.batchNumber).not.toBe(original.get(one)?.attributes.batchNumber);
  });

  it("keeps the key but changes the fingerprint when an amount changes", () => {
    const original = byTrace(records(fixture("original.ach"))).get("231380100000002");
    const corrected = byTrace(records(fixture("corrected.ach"))).get("231380100000002");
    expect(corrected?.naturalKey).toBe(original?.naturalKey);
    expect(corrected?.fingerprint).not.toBe(original?.fingerprint);
  });

  it("changes the fingerprint when an addenda payload changes", () => {
    const lines = linesOf("ppd-credits-debits.ach");
    const before = byTrace(records(file(lines))).get("231380100000002");
    lines[4] = setField(lines[4]!, 4, "SALARY APRIL");
    const after = byTrace(records(file(lines))).get("231380100000002");
    expect(after?.fingerprint).not.toBe(before?.fingerprint);
  });

  it("links a return to its original by original trace and original RDFI", () => {
    const forward = byTrace(records(fixture("ppd-credits-debits.ach"))).get("231380100000001");
    const returned = records(fixture("returns.ach"))[0];
    expect(returned?.kind).toBe("return");
    expect(returned?.original).toBe(forward?.attributes.linkKey);
    expect(returned?.intentId).toBe(forward?.intentId);
    expect(returned?.amount).toBe(forward?.amount);
    expect(returned?.attributes.reasonCode).toBe("R03");
  });

  it("tells dishonored returns and NOCs apart", () => {
    expect(records(fixture("returns.ach")).map((r) => r.kind)).toEqual(["return", "return", "dishonored-return"]);
    const nocs = records(fixture("noc.ach"));
    expect(nocs.map((r) => [r.kind, r.amount, r.original, r.attributes.reasonCode])).toEqual([
      ["noc", 0n, achLinkKey("231380100000001", "09100001"), "C01"], ["noc", 0n, achLinkKey("231380100000002", "02100002"), "C05"],
    ]);
  });

  it("refuses, as a value, an entry whose amount is not numeric", () => {
    const parsed = parseAch(fixture("malformed-amount-not-numeric.ach"));
    const bad = parsed.batches[0]!.entries[2]!;
    const result = achEntryToCanonical(bad, { tenantId: "t1" });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject({ code: "ACH_FIELD_NOT_NUMERIC", position: { line: 5, field: "amount" } });
  });

  it("falls back to the file creation date when the effective entry date is unusable", () => {
    const lines = linesOf("base-valid.ach");
    lines[1] = setField(lines[1]!, 70, "000000");
    expect(records(file(lines))[0]?.valueDate).toBe("2025-03-04");
  });
});

describe("ACH file identity and content hash", () => {
  it("identifies a file by destination, origin, creation date and time and file ID modifier", () => {
    const identity = achFileIdentity(parseAch(fixture("base-valid.ach")).fileHeader!);
    expect(identity).toEqual({ immediateDestination: "091000019", immediateOrigin: "231380104", fileCreationDate: "250304", fileCreationTime: "1015", fileIdModifier: "K", key: "ach-file:091000019:231380104:250304:1015:K" });
  });

  function contentHash(bytes: Buffer): string {
    const parsed = parseAch(bytes);
    const hash = new AchContentHash(achFileIdentity(parsed.fileHeader!));
    for (const r of records(bytes)) hash.add(r);
    return hash.digest();
  }

  it("hashes normalized content: line endings do not change it, an amount does", () => {
    const crlf = fixture("crlf.ach");
    expect(contentHash(Buffer.from(crlf.toString("latin1").replace(/\r\n/g, "\n"), "latin1"))).toBe(contentHash(crlf));
    const lines = linesOf("base-valid.ach");
    const before = contentHash(file(lines));
    lines[2] = setField(lines[2]!, 30, "0000125001");
    expect(contentHash(file(lines))).not.toBe(before);
  });
});
