import { createHash } from "node:crypto";
import fc from "fast-check";
import { inspectIso20022 } from "../../../src/normalize/inspect-iso20022.ts";
import { describe, expect, it } from "vitest";
import { parseIso20022Message } from "../../../src/protocols/iso20022/message-parser.ts";
import { readIso20022Sync } from "../../../src/protocols/iso20022/reader.ts";
import { normalizeIso20022Transaction } from "../../../src/normalize/from-iso20022.ts";
import { collect, fixture } from "./helpers.ts";

const seeds = ["pacs008-multi.xml", "pain001-v09.xml", "pacs002-status.xml", "pacs004-return.xml", "camt056-cancellation.xml", "camt053-statement.xml", "bad/pacs008-apphdr-mismatch.xml",
  // Readers added for other versions and partners: direct debits, no namespace (root or AppHdr), equivalent amounts, old BIC agents.
  "pain008-v08.xml", "pain002-no-namespace.xml", "pacs008-apphdr-no-namespace.xml", "pain001-equivalent-amount.xml", "pacs008-v02.xml", "camt054-v12.xml"].map((name) => fixture(name));

const fragments = ["<", ">", "</", "/>", "&", "&amp;", "&#0;", "&#x110000;", "<!DOCTYPE x>", "<![CDATA[", "]]>", "<!--", "-->", '"', "<CdtTrfTxInf>", "</CdtTrfTxInf>", "<Document>", "\u0000", "\uFFFF", "<?xml version=\"1.0\" encoding=\"latin1\"?>", "NOTPROVIDED", "999999999999999999999.99", "<UETR>", "Ccy=\"JPY\""];

/** One edit of a seed file: delete, duplicate, insert a hostile fragment, or flip a byte. */
const mutation = fc.record({
  seed: fc.integer({ min: 0, max: seeds.length - 1 }),
  edits: fc.array(fc.record({
    kind: fc.constantFrom("delete", "duplicate", "insert", "flip"),
    at: fc.nat(),
    length: fc.integer({ min: 1, max: 64 }),
    fragment: fc.constantFrom(...fragments),
    byte: fc.integer({ min: 0, max: 255 }),
  }), { minLength: 1, maxLength: 4 }),
});

function mutate(input: { seed: number; edits: { kind: string; at: number; length: number; fragment: string; byte: number }[] }): Buffer {
  let bytes = seeds[input.seed] ?? Buffer.alloc(0);
  for (const edit of input.edits) {
    const at = bytes.length === 0 ? 0 : edit.at % bytes.length;
    const end = Math.min(bytes.length, at + edit.length);
    if (edit.kind === "delete") bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(end)]);
    else if (edit.kind === "duplicate") bytes = Buffer.concat([bytes.subarray(0, end), bytes.subarray(at, end), bytes.subarray(end)]);
    else if (edit.kind === "insert") bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(edit.fragment), bytes.subarray(at)]);
    else if (bytes.length > 0) {
      bytes = Buffer.from(bytes);
      bytes[at] = edit.byte;
    }
  }
  return bytes;
}

describe("mutated XML never throws and never hangs", () => {
  it("the streaming reader yields findings or transactions, then one end event", () => {
    fc.assert(fc.property(mutation, (input) => {
      const bytes = mutate(input);
      // Never hangs: the read returns (the test's timeout guards it); no timed assert, which a busy
      // machine could fail (issue 17).
      const result = collect(readIso20022Sync(bytes));
      expect(result.events.at(-1)?.type).toBe("end");
      expect(result.events.filter((e) => e.type === "end")).toHaveLength(1);
      if (!result.summary.complete) expect(result.summary.fileErrorCount).toBeGreaterThan(0);
      for (const transaction of result.transactions) {
        if (!result.header) continue;
        const normalized = normalizeIso20022Transaction(result.header, transaction, { tenantId: "t" });
        if (!normalized.ok) expect(normalized.error.length).toBeGreaterThan(0);
      }
    }), { numRuns: 400 });
  });

  it("inspect gives every mutated file a report and a content hash that is never the hash of nothing", () => {
    const hashOfNothing = createHash("sha256").digest("hex");
    fc.assert(fc.property(mutation, (input) => {
      const bytes = mutate(input);
      const report = inspectIso20022(bytes);
      expect(report.contentHash).toMatch(/^[0-9a-f]{64}$/);
      if (bytes.length > 0) expect(report.contentHash).not.toBe(hashOfNothing);
      for (const found of report.findings) expect(typeof found.code).toBe("string");
    }), { numRuns: 300 });
  });

  it("the single-message parser agrees with the streaming reader on what it accepts", () => {
    fc.assert(fc.property(mutation, (input) => {
      const bytes = mutate(input);
      const streamed = collect(readIso20022Sync(bytes));
      const whole = collect(parseIso20022Message(bytes));
      expect(whole.events.at(-1)?.type).toBe("end");
      if (streamed.summary.complete && whole.summary.complete) {
        expect(whole.transactions.map((t) => t.values)).toEqual(streamed.transactions.map((t) => t.values));
      }
    }), { numRuns: 300 });
  });
});
