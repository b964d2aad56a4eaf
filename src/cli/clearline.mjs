#!/usr/bin/env node
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
