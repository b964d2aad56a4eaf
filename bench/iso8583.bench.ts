import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { assert } from "../src/assert.ts";
import { frameMessage, iso87AsciiDictionary, pack, unpack, type Message } from "../src/protocols/iso8583/index.ts";
import { ratioRow, type BenchReport, type BenchRow, type Benchmark } from "./harness.ts";

/**
 * `npm run bench -- iso8583`. Sections run one after another in the same process and report
 * rows against a baseline measured in the same run. Section 1: the codec against the npm
 * `iso_8583` package. (The endpoint section, authorizations/s through the TCP endpoint against
 * the same database transaction issued directly, is added beside it by the gateway work.)
 */

interface BaselineCodec {
  getBufferMessage(): Buffer | { error: string };
  getIsoJSON(buffer: Buffer): Record<string, string> | { error: string };
}
type BaselineConstructor = new (data?: Record<string, string>) => BaselineCodec;

const require = createRequire(import.meta.url);
const fixture = JSON.parse(readFileSync(new URL("../fixtures/iso8583/0100-authorization-request.json", import.meta.url), "utf8")) as {
  expected: Message & { fields: Record<string, string> };
};

const measureMs = 1_500;   // per timed round: long enough to swamp timer noise, short enough for CI
const rounds = 3;          // best of three, alternating sides, so a GC pause or a noisy neighbour hurts neither side alone

/** Messages per second of `operation`, best of `rounds` rounds of about measureMs each. */
function messagesPerSecond(operation: () => void): number {
  for (let i = 0; i < 2_000; i++) operation(); // warm-up: let the JIT settle before timing
  let best = 0;
  for (let round = 0; round < rounds; round++) {
    let count = 0;
    const started = process.hrtime.bigint();
    const deadline = started + BigInt(measureMs) * 1_000_000n;
    let now = started;
    while (now < deadline) {
      for (let i = 0; i < 200; i++) operation();
      count += 200;
      now = process.hrtime.bigint();
    }
    best = Math.max(best, count / (Number(now - started) / 1e9));
  }
  return best;
}

function codecSection(): { rows: BenchRow[]; notes: string[] } {
  const message: Message = fixture.expected;
  const Baseline = require("iso_8583") as BaselineConstructor;
  const baselineData = { 0: message.mti, ...fixture.expected.fields };

  // Both sides must round-trip the message before their speed means anything.
  const ours = pack(message, iso87AsciiDictionary);
  assert(ours.ok, "our codec packs the benchmark 0100");
  const reread = unpack(ours.value, iso87AsciiDictionary);
  assert(reread.ok && reread.value.fields[2] === message.fields[2], "our codec unpacks the benchmark 0100");
  const theirs = new Baseline(baselineData).getBufferMessage();
  assert(Buffer.isBuffer(theirs), "iso_8583 packs the benchmark 0100");
  const theirsBack = new Baseline().getIsoJSON(theirs);
  assert(!("error" in theirsBack) && theirsBack["2"] === message.fields[2], "iso_8583 unpacks the benchmark 0100");

  // Ours: pack, frame with the 2-byte length (as iso_8583's getBufferMessage does), unpack the body.
  const oursOperation = () => {
    const packed = pack(message, iso87AsciiDictionary);
    if (!packed.ok) throw new Error(packed.error.code);
    const framed = frameMessage(packed.value);
    if (!framed.ok) throw new Error(framed.error.code);
    const read = unpack(framed.value.subarray(2), iso87AsciiDictionary);
    if (!read.ok) throw new Error(read.error.code);
  };
  const baselineOperation = () => {
    const buffer = new Baseline(baselineData).getBufferMessage();
    if (!Buffer.isBuffer(buffer)) throw new Error(buffer.error);
    new Baseline().getIsoJSON(buffer);
  };

  let oursRate = 0;
  let baselineRate = 0;
  for (let pass = 0; pass < 2; pass++) {
    baselineRate = Math.max(baselineRate, messagesPerSecond(baselineOperation));
    oursRate = Math.max(oursRate, messagesPerSecond(oursOperation));
  }
  return {
    rows: [ratioRow({
      case: "codec pack+frame+unpack, typical 0100 (19 fields, ISO 8583:1987 ASCII)",
      value: oursRate, unit: "messages/s", baseline: baselineRate, baselineCase: "npm iso_8583 getBufferMessage+getIsoJSON", goal: ">= 10",
    })],
    notes: [`message: ${ours.value.length} bytes with our hex bitmap, ${theirs.length - 2} bytes from iso_8583; both sides checked to round-trip the PAN before timing`],
  };
}

export const run: Benchmark = async () => {
  const report: BenchReport = { name: "iso8583", rows: [], notes: [] };
  const codec = codecSection();
  report.rows.push(...codec.rows);
  report.notes?.push(...codec.notes);
  return report;
};
