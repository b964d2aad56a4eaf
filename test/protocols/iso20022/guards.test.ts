import { describe, expect, it } from "vitest";
import { limits } from "../../../src/config/limits.ts";
import { parseIso20022Message } from "../../../src/protocols/iso20022/message-parser.ts";
import { readIso20022 } from "../../../src/protocols/iso20022/reader.ts";
import { collect, creditTransaction, fixture, pacs008, read } from "./helpers.ts";

describe("hostile input is refused with a typed error before it costs anything", () => {
  it("refuses a billion-laughs DOCTYPE before parsing, quickly", () => {
    const started = performance.now();
    const result = read(fixture("bad/pacs008-billion-laughs.xml"));
    expect(performance.now() - started).toBeLessThan(200);
    expect(result.fileFindings).toEqual([expect.objectContaining({ code: "ISO20022_DOCTYPE_REFUSED", scope: "file" })]);
    expect(result.transactions).toEqual([]);
  });

  it("refuses an external-entity DOCTYPE (XXE) before parsing", () => {
    const result = read(fixture("bad/pacs008-xxe.xml"));
    expect(result.fileFindings[0]?.code).toBe("ISO20022_DOCTYPE_REFUSED");
    expect(JSON.stringify(result.events)).not.toContain("root:");
  });

  it("refuses a DOCTYPE split across two chunks of the stream", async () => {
    const bytes = fixture("bad/pacs008-billion-laughs.xml");
    const at = bytes.indexOf("<!DOCTYPE") + 4;
    const events = [];
    for await (const event of readIso20022([bytes.subarray(0, at), bytes.subarray(at)])) events.push(event);
    expect(collect(events).fileFindings[0]?.code).toBe("ISO20022_DOCTYPE_REFUSED");
  });

  it("refuses a DOCTYPE in the single-message parser too", () => {
    expect(collect(parseIso20022Message(fixture("bad/pacs008-billion-laughs.xml"))).fileFindings[0]?.code).toBe("ISO20022_DOCTYPE_REFUSED");
  });

  it("stops reading an oversized stream at the bound without buffering it", async () => {
    const fileBytesMax = 1_000_000;
    let produced = 0;
    async function* endless(): AsyncGenerator<Buffer> {
      yield Buffer.from(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"><FIToFICstmrCdtTrf>`);
      const block = Buffer.from(`<SplmtryData>${"x".repeat(1000)}</SplmtryData>`);
      for (;;) {
        produced += block.length;
        yield block;
      }
    }
    const rssBefore = process.memoryUsage().rss;
    const events = [];
    for await (const event of readIso20022(endless(), { limits: { fileBytesMax } })) events.push(event);
    const result = collect(events);
    expect(result.fileFindings[0]).toMatchObject({ code: "INPUT_TOO_LARGE", scope: "file" });
    expect(produced).toBeLessThan(fileBytesMax + 2_000);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
  });

  it("accepts a file of exactly fileBytesMax bytes and refuses one byte more", () => {
    const xml = Buffer.from(pacs008([creditTransaction()]));
    expect(read(xml, { limits: { fileBytesMax: xml.length } }).summary.complete).toBe(true);
    expect(read(xml, { limits: { fileBytesMax: xml.length - 1 } }).fileFindings[0]?.code).toBe("INPUT_TOO_LARGE");
  });

  it("refuses nesting one level past depthMax", () => {
    const nested = (levels: number) => `<Envelope>${"<W>".repeat(levels - 2)}${pacs008([creditTransaction()])}${"</W>".repeat(levels - 2)}</Envelope>`;
    // Document sits at depth `levels`; its deepest element (CdtTrfTxInf/InstgAgt/FinInstnId/BICFI) 5 below
    const depthMax = 30;
    expect(read(nested(depthMax - 5), { limits: { depthMax } }).summary.complete).toBe(true);
    expect(read(nested(depthMax - 4), { limits: { depthMax } }).fileFindings[0]?.code).toBe("ISO20022_DEPTH_EXCEEDED");
  });

  it("refuses a text one byte past elementTextBytesMax", () => {
    const elementTextBytesMax = 4_096;
    const options = { limits: { elementTextBytesMax, chunkBytes: 1_024 } };
    expect(read(pacs008([creditTransaction({ endToEndId: "e".repeat(elementTextBytesMax) })]), options).summary.complete).toBe(true);
    const result = read(pacs008([creditTransaction({ endToEndId: "e".repeat(elementTextBytesMax + 1) })]), options);
    expect(result.fileFindings[0]?.code).toBe("ISO20022_ELEMENT_TEXT_TOO_LONG");
  });

  it("refuses the transaction one past transactionsMax", () => {
    const transactions = Array.from({ length: 4 }, () => creditTransaction());
    expect(read(pacs008(transactions), { limits: { transactionsMax: 4 } }).summary.complete).toBe(true);
    const result = read(pacs008([...transactions, creditTransaction()]), { limits: { transactionsMax: 4 } });
    expect(result.fileFindings[0]?.code).toBe("ISO20022_TRANSACTIONS_TOO_MANY");
    expect(result.transactions).toHaveLength(4);
  });

  it("refuses a transaction holding one element past captureElementsMax", () => {
    const base = creditTransaction();
    const elements = (base.match(/<[A-Za-z]/g) ?? []).length + 1; // + the CdtTrfTxInf itself
    expect(read(pacs008([base]), { limits: { captureElementsMax: elements } }).summary.complete).toBe(true);
    const result = read(pacs008([`${base}<ChrgBr>SLEV</ChrgBr>`]), { limits: { captureElementsMax: elements } });
    expect(result.fileFindings[0]).toMatchObject({ code: "ISO20022_TRANSACTION_TOO_LARGE", position: { xmlPath: "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf[1]" } });
  });

  it("keeps findingsMax findings and counts the rest as dropped", () => {
    const transactions = Array.from({ length: 5 }, () => creditTransaction());
    const xml = pacs008(transactions, { nbOfTxs: "9", ctrlSum: "1.00" });
    const result = read(xml, { limits: { findingsMax: 1 } });
    expect(result.fileFindings).toHaveLength(1);
    expect(result.summary.findingsDropped).toBe(1);
    expect(result.summary.fileErrorCount).toBe(2);
  });

  it("refuses a single message one byte past messageBytesMax", () => {
    const padding = `<!--${"p".repeat(limits.iso20022.messageBytesMax)}-->`;
    const result = collect(parseIso20022Message(Buffer.from(`${padding}${pacs008([creditTransaction()])}`)));
    expect(result.fileFindings[0]?.code).toBe("INPUT_TOO_LARGE");
  });
});
