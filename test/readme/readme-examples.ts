import { readFileSync } from "node:fs";

/**
 * The README's examples, read as a script. In a ```sh block, a line is a command (a trailing
 * "  # ..." after two spaces is a remark), and the lines after it that start with "# " are what
 * it prints, in order (other lines may come between). In an expected line, "..." stands for any
 * text. An id written as `fil_...` (any of the prefixes below) in a command stands for the first
 * such id in the latest output that printed one. `NAME=value` sets a shell variable for the
 * commands after it. A `clearline serve` or `npm start` line is the service the test started.
 * An HTML comment `<!-- readme-test: skip REASON -->` before a block leaves it out; `<!--
 * readme-test: serve-output -->` before a ```text block says the service prints those lines.
 */
export interface ReadmeStep {
  command: string;
  expected: string[];
  line: number;   // 1-based line of the command in README.md
}

export type ReadmeBlock =
  | { kind: "commands"; line: number; steps: ReadmeStep[] }
  | { kind: "serve-output"; line: number; expected: string[] }
  | { kind: "skipped"; line: number; reason: string };

export const idPrefixes = ["fil", "rev", "rdf", "rrn", "rim", "inc", "cl", "pay", "ten"] as const;

const DIRECTIVE = /<!--\s*readme-test:\s*(skip|serve-output)\s*(.*?)\s*-->/;

export function readmeBlocks(path: string): ReadmeBlock[] {
  const lines = readFileSync(path, "utf8").split("\n");
  const blocks: ReadmeBlock[] = [];
  let directive: { kind: string; reason: string } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] ?? "";
    const marked = DIRECTIVE.exec(text);
    if (marked) directive = { kind: marked[1] ?? "", reason: marked[2] ?? "" };
    const fence = /^```(\w+)/.exec(text);
    if (!fence) continue;
    const start = i + 1;
    const body: string[] = [];
    for (i++; i < lines.length && !(lines[i] ?? "").startsWith("```"); i++) body.push(lines[i] ?? "");
    const language = fence[1];
    if (directive?.kind === "skip") blocks.push({ kind: "skipped", line: start, reason: directive.reason });
    else if (directive?.kind === "serve-output") blocks.push({ kind: "serve-output", line: start, expected: body.filter((l) => l.trim() !== "") });
    else if (language === "sh") blocks.push({ kind: "commands", line: start, steps: stepsOf(body, start + 1) });
    directive = undefined;
  }
  return blocks;
}

function stepsOf(body: string[], firstLine: number): ReadmeStep[] {
  const steps: ReadmeStep[] = [];
  let pending = "";
  let pendingLine = 0;
  body.forEach((raw, index) => {
    const trimmed = raw.trim();
    if (pending === "" && trimmed.startsWith("#")) {
      const last = steps[steps.length - 1];
      if (last && trimmed.startsWith("# ")) last.expected.push(raw.replace(/^\s*# /, ""));
      return;
    }
    if (trimmed === "") return;
    if (pending === "") pendingLine = firstLine + index;
    const withoutRemark = raw.replace(/\s{2,}#\s.*$/, "");
    if (withoutRemark.endsWith("\\")) {
      pending += withoutRemark.slice(0, -1) + " ";
      return;
    }
    steps.push({ command: (pending + withoutRemark).trim(), expected: [], line: pendingLine });
    pending = "";
  });
  return steps;
}

/** An expected line as a pattern over one printed line: "..." is any text, runs of spaces are any spaces. */
export function linePattern(expected: string): RegExp {
  const parts = expected.trim().split("...").map((part) => part.split(/\s+/).map(escapeRegExp).join("\\s+"));
  return new RegExp(`^${parts.join(".*")}$`);
}

/** The printed lines matched, in order, by the expected ones; the first expected line that has no match, if any. */
export function firstUnmatched(expected: readonly string[], printed: readonly string[]): string | undefined {
  let from = 0;
  for (const line of expected) {
    if (line.trim() === "...") continue;
    const pattern = linePattern(line);
    const at = printed.findIndex((p, i) => i >= from && pattern.test(p.trim()));
    if (at < 0) return line;
    from = at + 1;
  }
  return undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
