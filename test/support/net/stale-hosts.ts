import { readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseJson, runCommand } from "./commands.ts";
import { creatorPidOf, namespacePrefix, tempFolderPrefix, vethAliasPrefix, vethPrefix }
  from "./host-names.ts";

/** What a sweep removed: names of namespaces, root-side veths and temp folders of dead runs. */
export interface SweepReport {
  namespaces: string[];
  veths: string[];
  tempFolders: string[];
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function madeByDeadProcess(name: string): boolean {
  const pid = creatorPidOf(name);
  return pid !== undefined && !processAlive(pid);
}

/** Kills every process still inside a namespace (a crashed run's PostgreSQL) with SIGKILL. */
export async function killProcessesIn(namespace: string): Promise<number[]> {
  const pids = (await runCommand("ip", ["netns", "pids", namespace]))
    .split("\n").map((line) => Number(line.trim())).filter((pid) => pid > 0);
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone between the listing and the kill
    }
  }
  return pids;
}

async function sweepNamespaces(): Promise<string[]> {
  const listed = parseJson<{ name: string }>(await runCommand("ip", ["-j", "netns", "list"]));
  const stale = listed.map((n) => n.name)
    .filter((name) => name.startsWith(namespacePrefix) && madeByDeadProcess(name));
  for (const name of stale) {
    await killProcessesIn(name);
    await runCommand("ip", ["netns", "del", name]);
  }
  return stale;
}

async function sweepVeths(): Promise<string[]> {
  // A root-side end outlives its namespace only while a process still holds that namespace, or
  // when a run died between creating the pair and moving it; its alias names the run's pid.
  const links = parseJson<{ ifname: string; ifalias?: string }>(
    await runCommand("ip", ["-j", "link", "show"]));
  const stale = links.filter((link) => link.ifname.startsWith(vethPrefix) &&
    link.ifalias?.startsWith(vethAliasPrefix) === true && madeByDeadProcess(link.ifalias))
    .map((link) => link.ifname);
  for (const name of stale) await runCommand("ip", ["link", "del", name]).catch(() => undefined);
  return stale;
}

function sweepTempFolders(): string[] {
  const stale = readdirSync(tmpdir())
    .filter((name) => name.startsWith(tempFolderPrefix) && madeByDeadProcess(name));
  for (const name of stale) rmSync(path.join(tmpdir(), name), { recursive: true, force: true });
  return stale;
}

/**
 * Removes what runs that died without cleaning up left: namespaces (and the processes still in
 * them), root-side veths and temp folders whose name carries the pid of a dead process. Hosts of
 * live processes, this one's or a concurrent run's, are never touched.
 */
export async function sweepStaleHosts(): Promise<SweepReport> {
  const namespaces = await sweepNamespaces();
  const veths = await sweepVeths();
  return { namespaces, veths, tempFolders: sweepTempFolders() };
}

let swept: Promise<SweepReport> | undefined;

/** The sweep, once per process, before its first host. */
export function sweepStaleHostsOnce(): Promise<SweepReport> {
  swept ??= sweepStaleHosts();
  return swept;
}
