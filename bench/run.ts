import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { printReport, type Benchmark } from "./harness.ts";

// `npm run bench -- NAME [args]` runs bench/NAME.bench.ts.
//   iso8583 --codec-only          the codec section alone (no database), for quick codec iterations
//   iso8583 --authorizations=N    authorizations per side per round in the endpoint section (default 1,000)
const here = fileURLToPath(new URL(".", import.meta.url));
const available = readdirSync(here).filter((f) => f.endsWith(".bench.ts")).map((f) => f.replace(/\.bench\.ts$/, ""));
const [name, ...args] = process.argv.slice(2);
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- NAME   (one of: ${available.join(", ")})`);
  process.exit(2);
}
const module = (await import(`./${name}.bench.ts`)) as { run: Benchmark };
const report = await module.run(args);
printReport(report);
if (report.failed !== undefined) console.error(`goal missed: ${report.failed}`);
process.exit(report.failed === undefined ? 0 : 1);
