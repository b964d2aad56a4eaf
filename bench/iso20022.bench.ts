import { execFileSync } from "node:child_process";
import { createReadStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, openSync, writeSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { XMLParser } from "fast-xml-parser";
import { normalizeIso20022Transaction } from "../src/normalize/from-iso20022.ts";
import { readIso20022 } from "../src/protocols/iso20022/reader.ts";
import type { Iso20022Header } from "../src/protocols/iso20022/types.ts";
import { ratioRow, type Benchmark, type BenchReport } from "./harness.ts";

// `npm run bench -- iso20022 [transactions]`: the streaming reader against fast-xml-parser's
// whole-document parse of the same generated pacs.008, each in its own child process so that
// one's peak RSS cannot pollute the other's.

interface ChildResult { transactions: number; seconds: number; peakRssMb: number }

const thisFile = fileURLToPath(import.meta.url);

function transaction(i: number): string {
  const n = String(i).padStart(8, "0");
  const uetr = `${n.slice(0, 8)}-0000-4000-8000-${String(i).padStart(12, "0")}`;
  return `    <CdtTrfTxInf>
      <PmtId><InstrId>I${n}</InstrId><EndToEndId>E2E${n}</EndToEndId><TxId>T${n}</TxId><UETR>${uetr}</UETR></PmtId>
      <IntrBkSttlmAmt Ccy="EUR">${(i % 100_000) + 1}.${String(i % 100).padStart(2, "0")}</IntrBkSttlmAmt>
      <IntrBkSttlmDt>2025-03-10</IntrBkSttlmDt>
      <ChrgBr>SLEV</ChrgBr>
      <InstgAgt><FinInstnId><BICFI>BANKDEFFXXX</BICFI></FinInstnId></InstgAgt>
      <InstdAgt><FinInstnId><BICFI>BANKGB2LXXX</BICFI></FinInstnId></InstdAgt>
      <Dbtr><Nm>Debtor ${n}</Nm><PstlAdr><StrtNm>Main Street</StrtNm><TwnNm>Berlin</TwnNm><Ctry>DE</Ctry></PstlAdr></Dbtr>
      <DbtrAcct><Id><IBAN>DE89370400440532013000</IBAN></Id></DbtrAcct>
      <DbtrAgt><FinInstnId><BICFI>BANKDEFFXXX</BICFI></FinInstnId></DbtrAgt>
      <CdtrAgt><FinInstnId><BICFI>BANKGB2LXXX</BICFI></FinInstnId></CdtrAgt>
      <Cdtr><Nm>Creditor ${n}</Nm><PstlAdr><StrtNm>High Street</StrtNm><TwnNm>London</TwnNm><Ctry>GB</Ctry></PstlAdr></Cdtr>
      <CdtrAcct><Id><IBAN>GB29NWBK60161331926819</IBAN></Id></CdtrAcct>
      <RmtInf><Ustrd>Invoice ${n}</Ustrd></RmtInf>
    </CdtTrfTxInf>
`;
}

function generate(path: string, count: number): void {
  const fd = openSync(path, "w");
  writeSync(fd, `<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08">\n  <FIToFICstmrCdtTrf>\n    <GrpHdr><MsgId>BENCH-0001</MsgId><CreDtTm>2025-03-10T09:00:00Z</CreDtTm><NbOfTxs>${count}</NbOfTxs><SttlmInf><SttlmMtd>INDA</SttlmMtd></SttlmInf></GrpHdr>\n`);
  let block = "";
  for (let i = 1; i <= count; i++) {
    block += transaction(i);
    if (i % 1_000 === 0) {
      writeSync(fd, block);
      block = "";
    }
  }
  writeSync(fd, `${block}  </FIToFICstmrCdtTrf>\n</Document>\n`);
  closeSync(fd);
}

async function childStream(path: string, normalize: boolean): Promise<ChildResult> {
  const started = process.hrtime.bigint();
  let transactions = 0;
  let header: Iso20022Header | undefined;
  for await (const event of readIso20022(createReadStream(path, { highWaterMark: 65_536 }))) {
    if (event.type === "header") header = event.header;
    if (event.type !== "transaction") continue;
    transactions++;
    if (normalize && header) {
      const record = normalizeIso20022Transaction(header, event.transaction, { tenantId: "bench" });
      if (!record.ok) throw new Error(`bench transaction ${transactions} did not normalize`);
    }
  }
  return { transactions, seconds: Number(process.hrtime.bigint() - started) / 1e9, peakRssMb: process.resourceUsage().maxRSS / 1024 };
}

function childWholeDocument(path: string): ChildResult {
  const started = process.hrtime.bigint();
  const parser = new XMLParser({ ignoreAttributes: false, parseTagValue: false, parseAttributeValue: false });
  const tree = parser.parse(readFileSync(path, "utf8")) as { Document: { FIToFICstmrCdtTrf: { CdtTrfTxInf: unknown[] } } };
  const transactions = tree.Document.FIToFICstmrCdtTrf.CdtTrfTxInf.length;
  return { transactions, seconds: Number(process.hrtime.bigint() - started) / 1e9, peakRssMb: process.resourceUsage().maxRSS / 1024 };
}

function runChild(mode: string, path: string): ChildResult {
  const output = execFileSync(process.execPath, ["--import", "tsx", thisFile, "--child", mode, path], { encoding: "utf8", maxBuffer: 1 << 20 });
  return JSON.parse(output.trim().split("\n").at(-1) ?? "{}") as ChildResult;
}

export const run: Benchmark = async (args) => {
  const count = Number(args[0] ?? 100_000);
  const directory = mkdtempSync(join(tmpdir(), "clearline-iso20022-bench-"));
  const path = join(directory, "pacs008.xml");
  try {
    generate(path, count);
    const megabytes = statSync(path).size / 1_048_576;
    const streamed = runChild("stream", path);
    const normalized = runChild("stream-normalize", path);
    const whole = runChild("whole", path);
    for (const result of [streamed, normalized, whole]) if (result.transactions !== count) throw new Error(`a child read ${result.transactions} of ${count} transactions`);
    const report: BenchReport = {
      name: "iso20022",
      rows: [
        ratioRow({ case: "streaming reader (saxes), transactions/s", value: count / streamed.seconds, unit: "tx/s", baseline: count / whole.seconds, baselineCase: "fast-xml-parser whole document", goal: ">= 5" }),
        ratioRow({ case: "streaming reader peak RSS (ratio: baseline / value, lower is better)", value: streamed.peakRssMb, unit: "MB", baseline: whole.peakRssMb, baselineCase: "fast-xml-parser whole document", goal: ">= 5" }, true),
        ratioRow({ case: "streaming reader + normalize, transactions/s", value: count / normalized.seconds, unit: "tx/s", baseline: count / whole.seconds, baselineCase: "fast-xml-parser whole document (parse only)" }),
        { case: "streaming reader + normalize peak RSS", value: normalized.peakRssMb, unit: "MB" },
      ],
      notes: [`generated pacs.008.001.08 with ${count} transactions, ${megabytes.toFixed(1)} MB, removed after the run`, `seconds: stream ${streamed.seconds.toFixed(2)}, stream+normalize ${normalized.seconds.toFixed(2)}, whole document ${whole.seconds.toFixed(2)}`],
    };
    return report;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
};

const childAt = process.argv.indexOf("--child");
if (childAt >= 0 && process.argv[1] === thisFile) {
  const mode = process.argv[childAt + 1];
  const path = process.argv[childAt + 2] ?? "";
  const result = mode === "whole" ? childWholeDocument(path) : await childStream(path, mode === "stream-normalize");
  writeFileSync(1, `${JSON.stringify(result)}\n`);
}
