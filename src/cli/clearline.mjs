#!/usr/bin/env -S node --max-semi-space-size=1
// --max-semi-space-size=1 (MB): V8's young generation grows to 16 MB semi-spaces under the
// allocation rate of a file ingest, and the old generation's limit grows with it, so a process
// whose live heap is 20-35 MB peaked at 200-230 MB RSS. Capped, `clearline ingest` of a
// 1,000,000-entry file stays under 200 MB for a few percent of CPU (docs/decisions/0041).
// A file whose records are all held (suspects, conflicts) still peaks near 200 MB RSS: V8 lets its
// garbage pile up. --max-old-space-size=128 brought it to 125 MB (docs/decisions/0091), but on the
// shebang it would cap `serve` too (an outage under load), and a re-exec of `ingest` alone broke
// the kill tests' view of the process (a signal became an exit code). Not applied yet.
// The `clearline` command: compiled JavaScript (dist/cli), built by `npm install` (prepare), by
// `npm start` and `npm test` before they run, and by `npm run build`. No runtime transpiler, so a
// command starts in a fraction of a second (docs/decisions/0013-compiled-cli.md).
try {
  await import("../../dist/cli/main.js");
} catch (error) {
  if (error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes("dist/cli/main.js")) {
    process.stderr.write("clearline: the compiled command is missing; run `npm run build` (npm install does it)\n");
    process.exit(1);
  }
  throw error;
}
