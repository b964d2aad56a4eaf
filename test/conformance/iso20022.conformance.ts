import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { normalizeIso20022Transaction } from "../../src/normalize/from-iso20022.ts";
import { readIso20022Sync } from "../../src/protocols/iso20022/reader.ts";
import type { Iso20022Event, Iso20022Header, Iso20022Transaction } from "../../src/protocols/iso20022/types.ts";

// Public samples from other projects, read in place (never copied into this repository).
const folder = new URL("../../../shared/conformance/iso20022/", import.meta.url);

interface Row {
  file: string;
  message: string;
  transactionCount: number;
  identifiers: Record<string, { values: string[]; more: number }>;
}

/** The SOURCES.md table: message, transaction count, and identifiers as "a | b (+n)". */
function readSources(): Row[] {
  const text = readFileSync(new URL("SOURCES.md", folder), "utf8");
  const rows: Row[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("| ") || line.startsWith("| file") || line.startsWith("|---")) continue;
    const cells = line.split(/(?<!\\)\|/).map((c) => c.trim()).slice(1, -1);
    const [file = "", , , message = "", count = "", identifiers = ""] = cells;
    const identifierTable: Row["identifiers"] = {};
    for (const part of identifiers.split(/;\s*(?=[A-Za-z]+=`)/)) {
      const match = /^([A-Za-z]+)=(.*)$/.exec(part.trim());
      if (!match) continue;
      const [, name = "", rest = ""] = match;
      const more = /\(\+(\d+)\)\s*$/.exec(rest);
      const values = [...rest.matchAll(/`([^`]*)`/g)].flatMap((m) => (m[1] ?? "").split(/\s*\\\|\s*/)).map((v) => v.replace(/\s*\(\+\d+\)$/, "").trim()).filter((v) => v !== "");
      const inlineMore = /\(\+(\d+)\)/.exec(rest);
      identifierTable[name] = { values, more: Number((more ?? inlineMore)?.[1] ?? 0) };
    }
    rows.push({ file, message: (/^([a-z]{4}\.\d{3}\.\d{3}\.\d{2})/.exec(message)?.[1]) ?? "", transactionCount: [...count.matchAll(/=(\d+)/g)].map((m) => Number(m[1]))[0] ?? 0, identifiers: identifierTable });
  }
  return rows;
}

/**
 * Every occurrence of an identifier in document order, as the SOURCES table counts them: the
 * group header's, then each context block's once (PmtInf, Stmt), then each transaction's.
 */
function occurrences(name: string, header: Iso20022Header | undefined, transactions: Iso20022Transaction[]): string[] {
  const out: string[] = [];
  const headerValue = header?.values[name];
  if (headerValue !== undefined) out.push(headerValue);
  let lastContext = 0;
  for (const transaction of transactions) {
    const context = transaction.context;
    if (context && context.index !== lastContext) {
      lastContext = context.index;
      const value = context.values[name];
      if (value !== undefined) out.push(value);
    }
    const value = transaction.values[name];
    if (value !== undefined) out.push(value);
  }
  return out;
}

describe("ISO 20022 conformance samples (../shared/conformance/iso20022)", () => {
  const rows = readSources();
  const files = readdirSync(folder).filter((f) => f.endsWith(".xml"));

  it("lists every sample file in SOURCES.md", () => {
    expect(rows.map((r) => r.file).sort()).toEqual([...files].sort());
  });

  it.each(files)("%s: read with the identifiers SOURCES.md lists, or refused with a typed finding and a position", (file) => {
    const row = rows.find((r) => r.file === file);
    expect(row, `${file} is listed`).toBeDefined();
    if (!row) return;
    let events: Iso20022Event[] = [];
    expect(() => { events = readIso20022Sync(readFileSync(new URL(file, folder))); }).not.toThrow();
    const header = events.find((e) => e.type === "header")?.header;
    const transactions = events.flatMap((e) => (e.type === "transaction" ? [e.transaction] : []));
    const fileErrors = events.flatMap((e) => (e.type === "finding" && e.finding.severity === "error" ? [e.finding] : []));
    expect(events.at(-1)?.type).toBe("end");
    expect(header?.message.id).toBe(row.message);
    expect(transactions).toHaveLength(row.transactionCount);
    // identifiers exact: strings as written, leading zeros kept, in document order
    for (const [name, expected] of Object.entries(row.identifiers)) {
      const found = occurrences(name, header, transactions);
      expect(found.slice(0, expected.values.length), `${file} ${name}`).toEqual(expected.values);
      expect(found.length, `${file} ${name} count`).toBe(expected.values.length + expected.more);
    }
    // a refusal is typed and positioned; otherwise every transaction normalizes or says why
    for (const finding of fileErrors) {
      expect(finding.code).toMatch(/^[A-Z0-9_]+$/);
      expect(finding.position.xmlPath ?? finding.position.line).toBeDefined();
    }
    for (const transaction of transactions) {
      for (const finding of transaction.findings) expect(finding.position.xmlPath).toMatch(/^\/Document\//);
      if (!header) continue;
      const normalized = normalizeIso20022Transaction(header, transaction, { tenantId: "conformance" });
      if (normalized.ok) {
        expect(normalized.value.naturalKey).toMatch(/^iso20022:/);
        expect(normalized.value.amount >= 0n).toBe(true);
      } else {
        for (const finding of normalized.error) expect(finding.position.xmlPath).toMatch(/^\/Document\//);
      }
    }
  });

  it("reads exact amounts: 510000.74 USD is 51000074 minor units", () => {
    const events = readIso20022Sync(readFileSync(new URL("fedwire_pacs008_scn1.xml", folder)));
    const header = events.find((e) => e.type === "header")?.header;
    const transaction = events.find((e) => e.type === "transaction")?.transaction;
    expect(header && transaction).toBeTruthy();
    if (!header || !transaction) return;
    const normalized = normalizeIso20022Transaction(header, transaction, { tenantId: "conformance" });
    expect(normalized.ok && [normalized.value.amount, normalized.value.currency]).toEqual([51000074n, "USD"]);
  });

  it("refuses the SEPA sample whose group header announces 1 transaction over 2, at the NbOfTxs path", () => {
    const events = readIso20022Sync(readFileSync(new URL("sepa_pain001_v03_multi_pmtinf.xml", folder)));
    const findings = events.flatMap((e) => (e.type === "finding" ? [e.finding] : []));
    expect(findings).toEqual(expect.arrayContaining([expect.objectContaining({ code: "ISO20022_NBOFTXS_MISMATCH", scope: "file", position: { xmlPath: "/Document/CstmrCdtTrfInitn/GrpHdr/NbOfTxs" } })]));
  });
});
