#!/usr/bin/env -S node --max-semi-space-size=1
// --max-semi-space-size=1 (MB): V8's young generation grows to 16 MB semi-spaces under the
// allocation rate of a file ingest, and the old generation's limit grows with it, so a process
// whose live heap is 20-35 MB peaked at 200-230 MB RSS. Capped, `clearline ingest` of a
// 1,000,000-entry file stays under 200 MB for a few percent of CPU (docs/decisions/0041).
// --max-old-space-size=128 (MB): a file whose records are all held (suspects, conflicts) makes
// more short-lived garbage per record (the review's record as JSON, its event), and V8 let the
// old generation grow past 200 MB RSS before collecting it, at 20,000 entries as at 300,000: what
// is live stays 20-35 MB, plus at most ~50 MB for a dry run's keys (dropCheckRecordsMax); V8
// collects sooner near the cap instead (docs/decisions/0091). Only `clearline ingest` runs so
// capped (it starts itself again with the flag): `serve` holds connections, queues and caches
// whose heap under load was never measured against 128 MB, and a cap there would be an outage.
// The `clearline` command: compiled JavaScript (dist/cli), built by `npm install` (prepare), by
// `npm start` and `npm test` before they run, and by `npm run build`. No runtime transpiler, so a
// command starts in a fraction of a second (docs/decisions/0013-compiled-cli.md).
const ingestHeapCapFlag = "--max-old-space-size=128";
if (process.argv[2] === "ingest" && !process.execArgv.includes(ingestHeapCapFlag)) {
  const { spawnSync } = await import("node:child_process");
  const args = [...process.execArgv, ingestHeapCapFlag, ...process.argv.slice(1)];
  const child = spawnSync(process.execPath, args, { stdio: "inherit" });
  process.exit(child.status ?? 1);
}
try {
  await import("../../dist/cli/main.js");
} catch (error) {
  if (error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes("dist/cli/main.js")) {
    process.stderr.write("clearline: the compiled command is missing; run `npm run build` (npm install does it)\n");
    process.exit(1);
  }
  throw error;
}
