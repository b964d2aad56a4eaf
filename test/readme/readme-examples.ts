/**
 * The README's shell examples as data: in a ```sh or ```bash block, a line starting with `$ ` is a
 * command (a trailing `\` continues it on the next line) and the lines after it, up to the next
 * command, are what it prints. In a printed line `...` stands for any text (ids, keys, times); a
 * line that is `...` alone stands for any number of lines. A block fenced ```sh illustrative is
 * prose for the reader (it installs, or needs files of the reader's own) and is listed, not run.
 */
export interface ReadmeCommand {
  command: string;
  expected: string[];
  /** 1-based line of the README where the command starts, for the failure message. */
  line: number;
}

export interface ReadmeBlock {
  line: number;
  illustrative: boolean;
  /** The heading the block sits under. */
  section: string;
  commands: ReadmeCommand[];
}

const fenceOpen = /^```(sh|bash)(\s+illustrative)?\s*$/;

export function readmeShellBlocks(markdown: string): ReadmeBlock[] {
  const lines = markdown.split("\n");
  const blocks: ReadmeBlock[] = [];
  let section = "";
  for (let index = 0; index < lines.length; index += 1) {
    const text = lines[index] ?? "";
    if (text.startsWith("#")) section = text.replace(/^#+\s*/, "");
    const open = fenceOpen.exec(text);
    if (!open) continue;
    const body: Array<{ text: string; line: number }> = [];
    for (index += 1; index < lines.length && lines[index] !== "```"; index += 1) body.push({ text: lines[index] ?? "", line: index + 1 });
    blocks.push({ line: body[0]?.line ?? index, illustrative: open[2] !== undefined, section, commands: open[2] ? [] : parseCommands(body) });
  }
  return blocks;
}

function parseCommands(body: Array<{ text: string; line: number }>): ReadmeCommand[] {
  const commands: ReadmeCommand[] = [];
  for (let index = 0; index < body.length; index += 1) {
    const { text, line } = body[index] ?? { text: "", line: 0 };
    if (!text.startsWith("$ ")) {
      const current = commands.at(-1);
      if (!current) throw new Error(`README line ${line}: printed text before any command`);
      current.expected.push(text);
      continue;
    }
    let command = text.slice(2);
    while (command.endsWith("\\") && index + 1 < body.length) {
      index += 1;
      command = `${command}\n${body[index]?.text ?? ""}`;
    }
    commands.push({ command, expected: [], line });
  }
  return commands;
}

function linePattern(expected: string): RegExp {
  const parts = expected.split("...").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*")}$`, "s");
}

/** Whether the printed lines are the README's, `...` as described above. */
export function printedMatches(expected: readonly string[], printed: readonly string[]): boolean {
  const patterns = expected.map((line) => (line === "..." ? undefined : linePattern(line)));
  const match = (e: number, p: number): boolean => {
    if (e === patterns.length) return p === printed.length;
    const pattern = patterns[e];
    if (pattern === undefined) {
      for (let skip = p; skip <= printed.length; skip += 1) if (match(e + 1, skip)) return true;
      return false;
    }
    return p < printed.length && pattern.test(printed[p] ?? "") && match(e + 1, p + 1);
  };
  return match(0, 0);
}
