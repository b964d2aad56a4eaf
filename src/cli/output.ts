/**
 * True once the reader of stdout went away (`clearline ... | head -1`): further output is
 * dropped, and the command finishes its work (and stops what it started) without a stack trace.
 */
let stdoutClosed = false;

/** Swallows EPIPE (and writes after it) on stdout; any other stdout failure gets one line on stderr. */
export function watchStdout(stream: NodeJS.WriteStream): void {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED") {
      stdoutClosed = true;
      return;
    }
    process.stderr.write(`clearline: cannot write the output: ${error.message}\n`);
    stdoutClosed = true;
    process.exitCode = 1;
  });
}

function write(text: string): void {
  if (stdoutClosed) return;
  process.stdout.write(text);
}

/** JSON for machines (`--json`): bigints as decimal strings, since JSON has no bigint. */
export function printJson(value: unknown): void {
  write(JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v), 2) + "\n");
}

export function printLine(line: string): void {
  write(line + "\n");
}
