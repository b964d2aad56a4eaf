import { execFile } from "node:child_process";
import { netBounds } from "./bounds.ts";

/** A system command (ip, nft, tc, initdb) that failed: the command, its exit and its stderr. */
export class CommandFailed extends Error {
  constructor(readonly command: string[], readonly stderr: string, cause: string) {
    super(`\`${command.join(" ")}\` failed (${cause}): ${stderr.trim() || "no output"}`);
  }
}

export interface CommandOptions {
  input?: string;                 // written to the command's stdin (an nft script)
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/** Runs a command to its end and returns its stdout; throws CommandFailed otherwise. */
export function runCommand(command: string, args: string[],
  options: CommandOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, args, {
      timeout: options.timeoutMs ?? netBounds.commandTimeoutMs,
      maxBuffer: netBounds.commandOutputBytesMax,
      env: options.env ?? process.env,
      encoding: "utf8",
    }, (error, stdout, stderr) => {
      if (!error) return resolve(stdout);
      const cause = error.killed ? "timed out" : `exit ${String(error.code ?? error.signal)}`;
      reject(new CommandFailed([command, ...args], stderr, cause));
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** `ip netns exec NAMESPACE command args`: the command runs with the namespace's network. */
export function runInNamespace(namespace: string, command: string, args: string[],
  options: CommandOptions = {}): Promise<string> {
  return runCommand("ip", ["netns", "exec", namespace, command, ...args], options);
}

/** Parses `-j` output of ip, tc or nft; an empty answer (nothing matched) is an empty list. */
export function parseJson<T>(text: string): T[] {
  const trimmed = text.trim();
  if (trimmed === "") return [];
  return JSON.parse(trimmed) as T[];
}
