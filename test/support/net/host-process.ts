import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { createInterface } from "node:readline";
import { netBounds } from "./bounds.ts";

export interface ProcessExit { code: number | null; signal: NodeJS.Signals | null }

export interface HostProcessOptions {
  label?: string;                 // how errors name it; the command by default
  user?: string;                  // run as this user (setpriv), e.g. "postgres", which refuses root
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  stopSignal?: NodeJS.Signals;    // what stop() sends first; SIGTERM by default
}

/** A process running inside a test host's namespace, with its output as lines. */
export interface HostProcess {
  label: string;
  pid: number;
  child: ChildProcess;
  exited: Promise<ProcessExit>;
  /** The last lines of stdout and stderr (bounded), oldest first. */
  output(): string[];
  /** Resolves with the first line (kept or to come) that matches; rejects if it exits first. */
  waitForLine(matches: (line: string) => boolean, what: string): Promise<string>;
  /** Writes one line to the process's stdin. */
  send(line: string): void;
  /** Stops it (its stop signal, then SIGKILL after a grace period) and resolves with its exit. */
  stop(): Promise<ProcessExit>;
}

function keepLines(child: ChildProcess, kept: string[], events: EventEmitter): void {
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream, crlfDelay: Infinity }).on("line", (text: string) => {
      kept.push(text.slice(0, netBounds.processOutputLineCharsMax));
      if (kept.length > netBounds.processOutputLinesMax) kept.shift();
      events.emit("line", text);
    });
  }
}

/**
 * Runs `command args` in `namespace` (`ip netns exec`, which execs the command: the child's pid
 * is the command's own). With `user`, setpriv drops to that user after entering the namespace.
 */
export function spawnInNamespace(namespace: string, command: string, args: string[],
  options: HostProcessOptions = {}): HostProcess {
  const asUser = options.user === undefined ? [] :
    ["setpriv", `--reuid=${options.user}`, `--regid=${options.user}`, "--init-groups", "--"];
  const child = spawn("ip", ["netns", "exec", namespace, ...asUser, command, ...args], {
    cwd: options.cwd, env: options.env ?? process.env, stdio: ["pipe", "pipe", "pipe"],
  });
  const label = options.label ?? command;
  const kept: string[] = [];
  const events = new EventEmitter();
  keepLines(child, kept, events);
  child.stdin?.on("error", () => undefined);   // a peer that exits closes its stdin under us
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once("exit", (code, signal) => { resolve({ code, signal }); events.emit("exit"); });
  });
  let spawnError: Error | undefined;
  child.once("error", (error) => { spawnError = error; events.emit("exit"); });
  const gone = () =>
    spawnError !== undefined || child.exitCode !== null || child.signalCode !== null;
  const describeEnd = () => spawnError ?
    `could not start: ${spawnError.message}` :
    `exited (${String(child.exitCode ?? child.signalCode)})`;
  return {
    label, child, exited,
    pid: child.pid ?? -1,
    output: () => [...kept],
    waitForLine(matches, what) {
      const past = kept.find(matches);
      if (past !== undefined) return Promise.resolve(past);
      return new Promise((resolve, reject) => {
        const onLine = (line: string) => { if (matches(line)) { stopListening(); resolve(line); } };
        const onExit = () => {
          stopListening();
          const tail = kept.join("\n");
          reject(new Error(`${label} ${describeEnd()} before ${what}; its last output:\n${tail}`));
        };
        const stopListening = () => { events.off("line", onLine); events.off("exit", onExit); };
        events.on("line", onLine);
        events.on("exit", onExit);
        if (gone()) onExit();
      });
    },
    send(line) { child.stdin?.write(`${line}\n`); },
    async stop() {
      if (spawnError) return { code: null, signal: null };
      if (!gone()) child.kill(options.stopSignal ?? "SIGTERM");
      const grace = setTimeout(() => child.kill("SIGKILL"), netBounds.processStopGraceMs);
      const exit = await exited;
      clearTimeout(grace);
      return exit;
    },
  };
}
