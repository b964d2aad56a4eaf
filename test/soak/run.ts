import { parseArgs } from "node:util";
import { newSeed } from "../sim/simulate.ts";
import { soakBounds } from "./bounds.ts";
import { runSoak } from "./soak.ts";

/**
 * `npm run soak -- --seed S --minutes M [--only TEXT]`: the seeded soak (--only: the fault kinds whose name contains TEXT) (docs/operations/soak.md). Needs root
 * (test hosts in network namespaces); exit 0 with the per-fault table, 1 on any violation, 2 when
 * it cannot run.
 */
async function main(): Promise<number> {
  const { values } = parseArgs({ options: { seed: { type: "string" }, minutes: { type: "string", default: "3" }, only: { type: "string" } }, strict: true });
  const seed = values.seed === undefined ? newSeed() : Number(values.seed);
  const minutes = Number(values.minutes);
  if (!Number.isSafeInteger(seed) || seed < 0 || seed > 0xffffffff) throw new Error(`--seed is a whole number from 0 to ${0xffffffff}`);
  if (!(minutes > 0 && minutes <= soakBounds.minutesMax)) throw new Error(`--minutes is a number above 0 and at most ${soakBounds.minutesMax}`);
  // The first SIGINT or SIGTERM ends the run early, as its deadline would: the fault in place is
  // healed and recovered from, the table printed, the test hosts removed. A second one kills.
  let stopRequested = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      stopRequested = true;
      process.stderr.write(`soak: ${signal}: ending after the current fault (again to kill)\n`);
    });
  }
  const result = await runSoak({
    seed, minutes, stopRequested: () => stopRequested,
    ...(values.only ? { only: values.only } : {}),
  });
  return result.ok ? 0 : 1;
}

main().then((code) => process.exit(code), (error: unknown) => {
  process.stderr.write(`soak: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(2);
});
