import { execFileSync } from "node:child_process";
import path from "node:path";
import { alternate, roundsRow, type BenchReport } from "./harness.ts";

const ROUNDS = 3;
const RUNS_PER_ROUND = 10;
const root = path.resolve(import.meta.dirname, "..");

/**
 * CPU seconds (user + system) that `runs` starts of a command cost, read from the shell's `times`
 * (the children's totals): the cost of starting the command, whatever the machine's load does to
 * its wall time.
 */
function childCpuSeconds(command: string, runs: number): number {
  const script = `for i in $(seq ${runs}); do ${command} > /dev/null; done; times`;
  const lines = execFileSync("bash", ["-c", script], { cwd: root, encoding: "utf8" }).trim().split("\n");
  // `times` prints the shell's own user/system times, then its children's: "0m1.234s 0m0.123s".
  const children = lines.at(-1)?.match(/(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/);
  if (!children) throw new Error(`unexpected output of times: ${lines.at(-1) ?? ""}`);
  const [, um, us, sm, ss] = children;
  return Number(um) * 60 + Number(us) + Number(sm) * 60 + Number(ss);
}

/**
 * `clearline --help` (the installed command: compiled JavaScript, subcommands loaded lazily;
 * docs/decisions/0013) against `node -e 0`, the least a Node.js command can cost, alternated in
 * rounds. The ratio is CPU per start, baseline over ours (higher is better: 1.0 = as cheap as an
 * empty Node.js process); the goal "<= 3x" of issue 15 is ours over baseline, printed in the case.
 */
export async function run(): Promise<BenchReport> {
  execFileSync("npm", ["run", "-s", "build"], { cwd: root, stdio: "inherit" });
  const startsPerSecond = (command: string) => async () => RUNS_PER_ROUND / childCpuSeconds(command, RUNS_PER_ROUND);
  const rounds = await alternate(ROUNDS, startsPerSecond("node -e 0"), startsPerSecond("node src/cli/clearline.mjs --help"));
  const row = roundsRow("`clearline --help`, starts per CPU second", "starts/CPU s", "node -e 0", rounds, ">= 0.33 (CPU <= 3x node -e 0)");
  return {
    name: "cli",
    rows: [row],
    notes: [
      `${RUNS_PER_ROUND} starts per side and round, ${ROUNDS} rounds alternated; CPU from bash's times (children's user + system)`,
      `CPU per start: clearline --help ${(1000 / row.value).toFixed(0)} ms, node -e 0 ${(1000 / (row.baseline ?? 1)).toFixed(0)} ms (ours/baseline ${((row.baseline ?? 0) / row.value).toFixed(2)}x)`,
    ],
  };
}
