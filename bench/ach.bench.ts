import { spawnSync } from "node:child_process";
import { createReadStream, createWriteStream, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { generateAchFile } from "../src/protocols/ach/generator.ts";
import { validateAch } from "../src/protocols/ach/reader.ts";
import { ratioRow, type BenchReport, type Benchmark } from "./harness.ts";

/**
 * ACH read+validate throughput on a generated PPD file, against merely splitting the same file
 * into lines (readline) in the same run. Each measured part runs in its own child process so that
 * its peak RSS (getrusage maxRSS) is its own, not the generator's or the parent's.
 */
const self = fileURLToPath(import.meta.url);
const chunkBytes = 64 * 1024;

interface ChildResult { seconds: number; maxRssMb: number; lines: number; entries: number; errors: number }

async function child(mode: string, file: string): Promise<ChildResult> {
  const started = process.hrtime.bigint();
  let lines = 0;
  let entries = 0;
  let errors = 0;
  if (mode === "lines") {
    const reader = createInterface({ input: createReadStream(file, { highWaterMark: chunkBytes }), crlfDelay: Infinity });
    for await (const line of reader) if (line.length > 0) lines++;
  } else {
    const summary = await validateAch(createReadStream(file, { highWaterMark: chunkBytes }));
    lines = summary.lineCount;
    entries = summary.entryCount;
    errors = summary.errorCount;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { seconds, maxRssMb: process.resourceUsage().maxRSS / 1024, lines, entries, errors };
}

function measure(mode: string, file: string): ChildResult {
  const out = spawnSync(process.execPath, ["--import", "tsx", self, "--child", mode, file], { encoding: "utf8", maxBuffer: 1 << 20 });
  if (out.status !== 0) throw new Error(`child ${mode} failed: ${out.stderr}`);
  return JSON.parse(out.stdout.trim().split("\n").at(-1) ?? "{}") as ChildResult;
}

async function generate(entries: number, file: string): Promise<number> {
  await pipeline(Readable.from(generateAchFile({ entries, seed: 42 })), createWriteStream(file));
  return statSync(file).size;
}

export const run: Benchmark = async (args) => {
  const entries = Number(args[0] ?? 1_000_000);
  const small = Math.max(1, Math.floor(entries / 10));
  const dir = tmpdir();
  const big = path.join(dir, `clearline-ach-bench-${process.pid}-${entries}.ach`);
  const little = path.join(dir, `clearline-ach-bench-${process.pid}-${small}.ach`);
  try {
    const bytes = await generate(entries, big);
    await generate(small, little);
    const lines = measure("lines", big);
    const validate = measure("validate", big);
    const validateSmall = measure("validate", little);
    if (validate.entries !== entries || validate.errors !== 0) throw new Error(`generated file read back as ${validate.entries} entries with ${validate.errors} errors`);
    const mb = bytes / 1024 / 1024;
    const report: BenchReport = {
      name: "ach",
      rows: [
        ratioRow({ case: `read+validate ${entries.toLocaleString("en-US")} PPD entries`, value: entries / validate.seconds, unit: "entries/s", baseline: lines.lines / lines.seconds, baselineCase: "readline lines/s" }),
        ratioRow({ case: "read+validate throughput", value: mb / validate.seconds, unit: "MB/s", baseline: mb / lines.seconds, baselineCase: "readline MB/s" }),
        ratioRow({ case: "peak RSS read+validate (lower is better)", value: validate.maxRssMb, unit: "MB", baseline: lines.maxRssMb, baselineCase: "readline", goal: "< 150 MB" }, true),
        ratioRow({ case: `peak RSS at ${small.toLocaleString("en-US")} entries vs ${entries.toLocaleString("en-US")}`, value: validateSmall.maxRssMb, unit: "MB", baseline: validate.maxRssMb, baselineCase: `${entries.toLocaleString("en-US")} entries`, goal: "~1.0x: independent of size" }),
      ],
      notes: [
        `file ${mb.toFixed(1)} MB, ${validate.lines.toLocaleString("en-US")} lines; each measure in a child process (node --import tsx), RSS from getrusage maxRSS`,
        `read+validate ${validate.seconds.toFixed(2)} s, readline ${lines.seconds.toFixed(2)} s; ratio = validate / readline (1.00x = as fast as splitting lines)`,
      ],
    };
    return report;
  } finally {
    rmSync(big, { force: true });
    rmSync(little, { force: true });
  }
};

if (process.argv[2] === "--child" && process.argv[1] && path.resolve(process.argv[1]) === self) {
  const result = await child(process.argv[3] ?? "", process.argv[4] ?? "");
  console.log(JSON.stringify(result));
}
