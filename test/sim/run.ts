import { parseArgs } from "node:util";
import { simBounds } from "./bounds.ts";
import { newSeed, runSimulation } from "./simulate.ts";

/**
 * `npm run sim -- --seed S --steps N [--verbose] [--keep-going] [--without-projection]`: one seeded simulation of the whole pipeline
 * against a real `clearline serve` and a real PostgreSQL (DATABASE_URL, else embedded). Exit 0
 * with a one-line summary, or 1 with the failing step, the invariant, the evidence and the replay
 * command. Without --seed a seed is drawn and printed, so any run can be replayed.
 */
async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { seed: { type: "string" }, steps: { type: "string" }, verbose: { type: "boolean", default: false }, "keep-going": { type: "boolean", default: false },
      "without-projection": { type: "boolean", default: false } },
    strict: true,
  });
  const seed = values.seed === undefined ? newSeed() : Number(values.seed);
  const steps = values.steps === undefined ? simBounds.stepsDefault : Number(values.steps);
  if (!Number.isSafeInteger(seed) || seed < 0 || seed > 0xffffffff) throw new Error(`--seed is a whole number from 0 to ${0xffffffff}`);
  if (!Number.isSafeInteger(steps) || steps < 1 || steps > simBounds.stepsMax) throw new Error(`--steps is a whole number from 1 to ${simBounds.stepsMax}`);
  if (!process.env.DATABASE_URL) process.stdout.write("sim: no DATABASE_URL: starting an embedded PostgreSQL in a temporary folder\n");
  const result = await runSimulation({ seed, steps, verbose: values.verbose ?? false, keepGoing: values["keep-going"] ?? false, withoutProjection: values["without-projection"] ?? false });
  return result.ok ? 0 : 1;
}

main().then((code) => process.exit(code), (error: unknown) => {
  process.stderr.write(`sim: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(2);
});
