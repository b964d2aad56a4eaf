import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { limits } from "../config/limits.ts";

/**
 * The embedded server's process as seen from the data directory, without its ChildProcess:
 * after a `kill -9` of the clearline process that started it, the postmaster lives on, and only
 * postmaster.pid (and our owner file) say who it is and who was responsible for it.
 */
export interface Postmaster {
  pid: number;
  port: number;
}

const OWNER_FILE = "embedded-postgres.owner.json";

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, but another user's (the postgres user when we are not root).
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** On Linux, a pid recorded before a reboot may now be anyone: check it is a postgres process. */
function isPostgresProcess(pid: number): boolean {
  const cmdline = `/proc/${pid}/cmdline`;
  if (!existsSync("/proc/self/cmdline")) return true;   // no /proc: trust the pid
  try {
    return /postgres/.test(readFileSync(cmdline, "latin1"));
  } catch {
    return false;
  }
}

/** postmaster.pid line 1 is the server's pid, line 4 its port (PostgreSQL's documented layout). */
export function livePostmaster(dataDir: string): Postmaster | undefined {
  const pidFile = path.join(dataDir, "postmaster.pid");
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, "utf8").split("\n");
  const pid = Number.parseInt(lines[0] ?? "", 10);
  const port = Number.parseInt(lines[3] ?? "", 10);
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return undefined;
  // A stale pid file after a crash of the server itself: PostgreSQL clears it on its next start.
  return isProcessAlive(pid) && isPostgresProcess(pid) ? { pid, port } : undefined;
}

/** The clearline process responsible for stopping the server (the one that started or adopted it). */
export function ownerOf(home: string): number | undefined {
  const file = path.join(home, OWNER_FILE);
  if (!existsSync(file)) return undefined;
  try {
    const { pid } = JSON.parse(readFileSync(file, "utf8")) as { pid?: unknown };
    return typeof pid === "number" && Number.isInteger(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

export function recordOwner(home: string, postmasterPid: number): void {
  writeFileSync(path.join(home, OWNER_FILE), JSON.stringify({ pid: process.pid, postmasterPid, since: new Date().toISOString() }), { mode: 0o600 });
}

export function releaseOwner(home: string): void {
  if (ownerOf(home) === process.pid) rmSync(path.join(home, OWNER_FILE), { force: true });
}

/** The owner recorded for `home` when it is a live process (this one included). */
export function liveOwnerOf(home: string): number | undefined {
  const owner = ownerOf(home);
  return owner !== undefined && isProcessAlive(owner) ? owner : undefined;
}

async function gone(pid: number, timeoutMs: number): Promise<boolean> {
  for (let waitedMs = 0; waitedMs < timeoutMs; waitedMs += limits.db.embeddedStopPollMs) {
    if (!isProcessAlive(pid)) return true;
    await sleep(limits.db.embeddedStopPollMs);
  }
  return !isProcessAlive(pid);
}

/**
 * Stops a postmaster we hold no ChildProcess for: fast shutdown (SIGINT: running transactions
 * roll back, the data stays consistent), and SIGKILL only if it has not gone within the bound
 * (crash recovery then runs on the next start, as after a power cut).
 */
export async function stopPostmaster(postmaster: Postmaster): Promise<void> {
  if (!isProcessAlive(postmaster.pid)) return;
  process.kill(postmaster.pid, "SIGINT");
  if (await gone(postmaster.pid, limits.db.embeddedStopTimeoutMs)) return;
  process.kill(postmaster.pid, "SIGKILL");
  await gone(postmaster.pid, limits.db.embeddedStopTimeoutMs);
}
