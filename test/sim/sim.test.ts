import { describe, expect, inject, it } from "vitest";
import { simBounds } from "./bounds.ts";
import { Prng, stepPrng } from "./prng.ts";
import { runSimulation } from "./simulate.ts";

// The fixed seeds of the simulation, as part of `npm test`: a longer hunt is
// `npm run sim -- --seed S --steps N` (docs/sim.md). Each run waits for events (answers, restarts,
// files settling), never for a short deadline, so the timeout only catches a hang.
const runTimeoutMs = 15 * 60_000;

describe("the seeded simulation of the whole pipeline", () => {
  for (const seed of simBounds.ciSeeds) {
    it(`keeps every invariant for ${simBounds.ciStepsPerSeed} steps of seed ${seed}`, async () => {
      const result = await runSimulation({ seed, steps: simBounds.ciStepsPerSeed, adminDatabaseUrl: inject("adminDatabaseUrl"), out: () => undefined });
      expect(result.ok, result.lines.join("\n")).toBe(true);
      expect(result.stepsRun).toBe(simBounds.ciStepsPerSeed);
    }, runTimeoutMs);
  }
});

describe("the simulation's PRNG", () => {
  it("draws the same numbers for a seed on every run, and other numbers for another seed or step", () => {
    const draw = (prng: Prng) => Array.from({ length: 8 }, () => prng.nextUint32());
    expect(draw(stepPrng(42, 7))).toEqual(draw(stepPrng(42, 7)));
    expect(draw(stepPrng(42, 7))).not.toEqual(draw(stepPrng(42, 8)));
    expect(draw(stepPrng(42, 7))).not.toEqual(draw(stepPrng(43, 7)));
  });

  it("picks integers inside their bounds and weighted keys in proportion", () => {
    const prng = new Prng(1);
    const counts = { a: 0, b: 0 };
    for (let i = 0; i < 10_000; i++) {
      const n = prng.int(3, 5);
      expect(n >= 3 && n <= 5).toBe(true);
      counts[prng.weighted({ a: 3, b: 1 })]++;
    }
    expect(counts.a / counts.b).toBeGreaterThan(2.5);
    expect(counts.a / counts.b).toBeLessThan(3.5);
  });
});
