/** JSON for machines (`--json`): bigints as decimal strings, since JSON has no bigint. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v), 2) + "\n");
}

export function printLine(line: string): void {
  process.stdout.write(line + "\n");
}
