import { layoutOf, type ClusterState } from "./layout.ts";
import { leaderOf, livePatroniPid, livePostmasterPid, readMembers } from "./members.ts";
import { descendantsOf, signal } from "./processes.ts";
import { waitMemberStreaming } from "./ready.ts";
import { startPatroni } from "./up.ts";

export interface KilledPrimary {
  node: string;
  patroniPid: number | undefined;
  postmasterPid: number | undefined;
  // The postmaster's backends and workers (and anything Patroni had started).
  otherPids: number[];
  killedAt: Date;
}

/**
 * kill -9 of the current leader's Patroni and PostgreSQL (postmaster and every child), all at
 * once, as a machine losing power would leave them. Returns at once: the caller watches the
 * failover. Patroni goes first, so that it cannot start the postmaster again.
 */
export async function killPrimary(state: ClusterState): Promise<KilledPrimary> {
  const layout = layoutOf(state);
  const members = await readMembers(layout);
  if (!members) throw new Error(`no Patroni of ${layout.scope} answers; is the cluster up?`);
  const leader = leaderOf(members);
  if (!leader) {
    const seen = members.map((member) => `${member.name} ${member.role} ${member.state}`);
    throw new Error(`${layout.scope} has no running leader right now (${seen.join("; ")})`);
  }
  const node = layout.nodes.find((candidate) => candidate.name === leader.name);
  if (!node) throw new Error(`leader ${leader.name} is not a node of ${layout.scope}`);
  const patroniPid = livePatroniPid(node);
  const postmasterPid = livePostmasterPid(node);
  const roots = [patroniPid, postmasterPid].filter((pid): pid is number => pid !== undefined);
  if (roots.length === 0) {
    throw new Error(`${node.name} is the leader but none of its processes lives`);
  }
  const otherPids = descendantsOf(roots).filter((pid) => !roots.includes(pid));
  const killedAt = new Date();
  signal(roots, "SIGKILL");
  signal(otherPids, "SIGKILL");
  return { node: node.name, patroniPid, postmasterPid, otherPids, killedAt };
}

/**
 * Starts a killed node's Patroni again and waits until it streams from the primary as a standby.
 * Patroni rewinds a former primary onto the new timeline (pg_rewind) or, if it cannot, clones it
 * again (remove_data_directory_on_rewind_failure).
 */
export async function restartNode(state: ClusterState, name: string): Promise<number> {
  const layout = layoutOf(state);
  const node = layout.nodes.find((candidate) => candidate.name === name);
  if (!node) {
    const names = layout.nodes.map((candidate) => candidate.name).join(", ");
    throw new Error(`no node ${name} in ${layout.scope} (nodes: ${names})`);
  }
  const running = livePatroniPid(node);
  if (running !== undefined) throw new Error(`${name}'s Patroni is running (pid ${running})`);
  const pid = startPatroni(layout, name);
  await waitMemberStreaming(state, name);
  return pid;
}
