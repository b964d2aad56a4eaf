import { existsSync, rmSync } from "node:fs";
import { layoutOf, readState, removeState, type ClusterLayout } from "./layout.ts";
import { haLimits } from "./limits.ts";
import { livePatroniPid, livePostmasterPid } from "./members.ts";
import { waitFor } from "./probes.ts";
import {
  descendantsOf,
  isOurs,
  processesMatching,
  readPidFile,
  removeLeftoverSharedMemory,
  signal,
} from "./processes.ts";

export interface DownOptions {
  portBase: number;
  log: (line: string) => void;
}

export interface DownResult {
  // False when no cluster was known on this port base (down is idempotent).
  found: boolean;
  killedPids: number[];
  removedDir: string | undefined;
}

/**
 * Removes the cluster on this port base, up or half-started: every process it started (by pid
 * file, checked against its command line), every PostgreSQL process of its nodes, then its
 * folder and its state file. Processes get SIGKILL, not a clean stop: the data is about to be
 * removed, and a kill cannot hang on a standby that is itself stopping.
 */
export async function down(options: DownOptions): Promise<DownResult> {
  const state = readState(options.portBase);
  if (!state) {
    options.log(`no cluster on port base ${options.portBase}`);
    return { found: false, killedPids: [], removedDir: undefined };
  }
  const layout = layoutOf(state);
  const killed = new Set<number>();
  // A Patroni killed between two looks may have started a postmaster: look until none is left.
  await waitFor(`every process of ${layout.scope} gone`, haLimits.everythingGoneMs, async () => {
    const pids = clusterPids(layout);
    if (pids.length === 0) return true;
    signal(pids, "SIGKILL");
    for (const pid of pids) killed.add(pid);
    return undefined;
  });
  for (const node of layout.nodes) removeLeftoverSharedMemory(node.dataDir);
  if (state.createdBaseDir && existsSync(state.baseDir)) {
    rmSync(state.baseDir, { recursive: true, force: true });
  }
  removeState(options.portBase);
  options.log(`stopped ${layout.scope}: ${killed.size} processes killed, ${state.baseDir} removed`);
  return { found: true, killedPids: [...killed], removedDir: state.baseDir };
}

/** Every live process of the cluster, found by pid file and by command line. */
export function clusterPids(layout: ClusterLayout): number[] {
  const roots = new Set<number>();
  for (const node of layout.nodes) {
    const patroni = livePatroniPid(node);
    const postmaster = livePostmasterPid(node);
    if (patroni !== undefined) roots.add(patroni);
    if (postmaster !== undefined) roots.add(postmaster);
  }
  const services = [
    { pidFile: layout.etcd.pidFile, marker: layout.etcd.dataDir },
    { pidFile: layout.haproxy.pidFile, marker: layout.haproxy.configFile },
  ];
  for (const { pidFile, marker } of services) {
    const pid = readPidFile(pidFile);
    if (pid !== undefined && isOurs(pid, marker)) roots.add(pid);
  }
  // Also what no pid file names: a postmaster whose postmaster.pid is not written yet, a
  // backend whose postmaster is already gone (it names the cluster in its process title).
  const matching = processesMatching([layout.baseDir, `postgres: ${layout.scope}: `]);
  for (const pid of matching) roots.add(pid);
  return [...new Set([...roots, ...descendantsOf([...roots])])];
}
