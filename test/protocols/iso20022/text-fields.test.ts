import { describe, expect, it } from "vitest";
import { DocumentWalker } from "../../../src/protocols/iso20022/document-walker.ts";
import { parseIso20022Message } from "../../../src/protocols/iso20022/message-parser.ts";
import { readerLimits } from "../../../src/protocols/iso20022/reader.ts";
import type { Iso20022Event } from "../../../src/protocols/iso20022/types.ts";
import { collect, creditTransaction, pacs008, read } from "./helpers.ts";

const endToEndIdPath = "/Document/FIToFICstmrCdtTrf/CdtTrfTxInf/PmtId/EndToEndId";

describe("ISO 20022 readers: text PostgreSQL cannot store", () => {
  const cases: Array<[string, string]> = [["a raw NUL", "E2E\u0000"], ["a NUL reference", "E2E&#0;"], ["a lone surrogate reference", "E2E&#xD800;"]];
  for (const [what, endToEndId] of cases) {
    it(`refuses ${what} in a text with its position, in the streaming reader and the message parser alike`, () => {
      const xml = pacs008([creditTransaction({ endToEndId })]);
      for (const result of [read(xml), collect(parseIso20022Message(Buffer.from(xml)))]) {
        expect(result.transactions).toEqual([]);
        expect(result.summary.complete).toBe(false);
        const [first] = result.fileFindings;
        expect(first?.severity).toBe("error");
        expect(first?.position.xmlPath ?? `${first?.position.line}:${first?.position.column}`).toBeTruthy();
        expect(["ISO20022_XML_MALFORMED", "TEXT_CHARACTER_INVALID"]).toContain(first?.code);
      }
    });
  }

  it("refuses a reference to a code point XML forbids in the message parser, which would otherwise drop it silently", () => {
    const xml = pacs008([creditTransaction({ endToEndId: "E2E&#0;" })]);
    const result = collect(parseIso20022Message(Buffer.from(xml)));
    expect(result.fileFindings[0]).toMatchObject({ code: "TEXT_CHARACTER_INVALID", position: { byteOffset: xml.indexOf("&#0;") } });
  });

  it("names the line and column of a raw NUL the streaming reader met", () => {
    const result = read(pacs008([creditTransaction({ endToEndId: "E2E\u0000" })]));
    expect(result.fileFindings[0]).toMatchObject({ code: "ISO20022_XML_MALFORMED", position: { line: 1, xmlPath: endToEndIdPath } });
    expect(result.fileFindings[0]?.position.column).toBeGreaterThan(0);
  });
});

describe("ISO 20022 document walker", () => {
  it("refuses NUL and lone surrogates in text and attributes whichever tokenizer feeds it", () => {
    for (const feed of [(w: DocumentWalker) => w.text("a\u0000"), (w: DocumentWalker) => w.open("Amt", { Ccy: "\udc00" })]) {
      const events: Iso20022Event[] = [];
      const walker = new DocumentWalker(readerLimits(), (event) => events.push(event));
      walker.open("Document", { xmlns: "urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08" });
      feed(walker);
      walker.end();
      expect(collect(events).fileFindings[0]).toMatchObject({ code: "TEXT_CHARACTER_INVALID", position: { xmlPath: expect.stringMatching(/^\/Document/) } });
    }
  });
});
