import { execFileSync, spawn } from "node:child_process";
import {
  chownSync,
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";

/**
 * The processes of the HA test cluster: started detached (they outlive the command that started
 * them), as the postgres user (PostgreSQL refuses to run as root), each with a pid file and a log
 * under the cluster's folder. Everything is found again by pid, and a pid is trusted only while
 * its command line still names the cluster's folder, so a reused pid is never killed.
 */

export interface SystemUser {
  uid: number;
  gid: number;
  home: string;
}

export function systemUser(name: string): SystemUser {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith(`${name}:`));
  if (!line) throw new Error(`no user ${name} on this machine (the postgresql packages add it)`);
  const [, , uid, gid, , home] = line.split(":");
  return { uid: Number(uid), gid: Number(gid), home: home ?? "/" };
}

export function chownTo(user: SystemUser, ...paths: string[]): void {
  for (const file of paths) chownSync(file, user.uid, user.gid);
}

export interface DetachedStart {
  command: string;
  args: string[];
  user: SystemUser;
  cwd: string;
  pidFile: string;
  logFile: string;
}

/** Starts a process in its own session, output appended to its log; returns its pid. */
export function startDetached(start: DetachedStart): number {
  const log = openSync(start.logFile, "a");
  chownTo(start.user, start.logFile);
  try {
    const child = spawn(start.command, start.args, {
      cwd: start.cwd,
      uid: start.user.uid,
      gid: start.user.gid,
      detached: true,
      stdio: ["ignore", log, log],
      // A clean environment: no PATRONI_* or PG* variable of the caller leaks into the cluster.
      env: {
        PATH: "/usr/lib/postgresql/15/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        HOME: start.user.home,
        LANG: "C.UTF-8",
        LC_ALL: "C.UTF-8",
      },
    });
    // A command that cannot be started reports it as an event; the missing pid says it here.
    child.on("error", () => undefined);
    if (child.pid === undefined) throw new Error(`could not start ${start.command}`);
    child.unref();
    writeFileSync(start.pidFile, `${child.pid}\n`);
    return child.pid;
  } finally {
    closeSync(log);
  }
}

export function readPidFile(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const pid = Number.parseInt(readFileSync(file, "utf8").trim(), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** The postmaster's pid, from the first line of postmaster.pid in its data folder. */
export function postmasterPid(dataDir: string): number | undefined {
  return readPidFile(`${dataDir}/postmaster.pid`);
}

export function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
  } catch {
    return undefined;
  }
}

function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
}

/** Alive and not a zombie waiting to be reaped. */
export function isAlive(pid: number): boolean {
  const state = processState(pid);
  return state !== undefined && state !== "Z" && state !== "X";
}

/** A pid from a pid file is ours only if its command line still names our folder. */
export function isOurs(pid: number, marker: string): boolean {
  return isAlive(pid) && (commandLine(pid)?.includes(marker) ?? false);
}

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name: state, ppid, ...
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

function livePids(): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter(isAlive);
}

/** Every live descendant of the given processes (a postmaster's backends and workers). */
export function descendantsOf(roots: number[]): number[] {
  const children = new Map<number, number[]>();
  for (const pid of livePids()) {
    const parent = parentOf(pid);
    if (parent !== undefined) children.set(parent, [...(children.get(parent) ?? []), pid]);
  }
  const found = new Set<number>();
  const queue = [...roots];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    for (const child of children.get(pid) ?? []) {
      if (found.has(child) || roots.includes(child)) continue;
      found.add(child);
      queue.push(child);
    }
  }
  return [...found];
}

/** Live processes whose command line contains one of the markers (a folder, a cluster name). */
export function processesMatching(markers: string[]): number[] {
  return livePids().filter((pid) => {
    if (pid === process.pid) return false;
    const line = commandLine(pid);
    return line !== undefined && markers.some((marker) => line.includes(marker));
  });
}

export function signal(pids: number[], name: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, name);
    } catch {
      // Already gone between the look and the kill: that is what we wanted.
    }
  }
}

/**
 * A killed postmaster leaves its System V shared memory segment behind (PostgreSQL removes it
 * at its next start, which a removed node never has). Removed when nothing is attached to it.
 */
export function removeLeftoverSharedMemory(dataDir: string): void {
  const file = `${dataDir}/postmaster.pid`;
  if (!existsSync(file)) return;
  // Line 7 of postmaster.pid: the segment's key and id.
  const shmid = readFileSync(file, "utf8").split("\n")[6]?.trim().split(/\s+/)[1];
  if (!shmid || !/^\d+$/.test(shmid)) return;
  const segment = readFileSync("/proc/sysvipc/shm", "utf8")
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .find((fields) => fields[1] === shmid);
  // Fields of /proc/sysvipc/shm: key shmid perms size cpid lpid nattch ...
  if (!segment || segment[6] !== "0") return;
  execFileSync("ipcrm", ["-m", shmid]);
}
