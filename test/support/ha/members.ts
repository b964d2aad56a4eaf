import { layoutOf, type ClusterLayout, type ClusterState, type NodeLayout } from "./layout.ts";
import { getJson } from "./probes.ts";
import { isOurs, postmasterPid, readPidFile } from "./processes.ts";

/** A member as Patroni's REST API reports it (GET /cluster). */
export interface PatroniMember {
  name: string;
  role: "leader" | "sync_standby" | "replica" | "standby_leader" | string;
  state: string;
  host: string;
  port: number;
  timeline?: number;
  lag?: number | string;
}

/** Each node of the layout, with what Patroni says of it and which of its processes live. */
export interface MemberStatus {
  node: NodeLayout;
  member: PatroniMember | undefined;
  patroniPid: number | undefined;
  postmasterPid: number | undefined;
}

/** The members from the first node whose Patroni answers; undefined when none does. */
export async function readMembers(layout: ClusterLayout): Promise<PatroniMember[] | undefined> {
  for (const node of layout.nodes) {
    try {
      const url = `http://127.0.0.1:${node.restPort}/cluster`;
      const { status, body } = await getJson<{ members: PatroniMember[] }>(url);
      if (status === 200 && Array.isArray(body.members)) return body.members;
    } catch {
      // This node's Patroni is down or slow: ask the next one.
    }
  }
  return undefined;
}

export function livePatroniPid(node: NodeLayout): number | undefined {
  const pid = readPidFile(node.pidFile);
  return pid !== undefined && isOurs(pid, node.configFile) ? pid : undefined;
}

export function livePostmasterPid(node: NodeLayout): number | undefined {
  const pid = postmasterPid(node.dataDir);
  return pid !== undefined && isOurs(pid, node.dataDir) ? pid : undefined;
}

export async function memberStatuses(state: ClusterState): Promise<MemberStatus[]> {
  const layout = layoutOf(state);
  const members = (await readMembers(layout)) ?? [];
  return layout.nodes.map((node) => ({
    node,
    member: members.find((member) => member.name === node.name),
    patroniPid: livePatroniPid(node),
    postmasterPid: livePostmasterPid(node),
  }));
}

export function leaderOf(members: PatroniMember[]): PatroniMember | undefined {
  return members.find((member) => member.role === "leader" && member.state === "running");
}

export function formatStatus(state: ClusterState, statuses: MemberStatus[]): string[] {
  const layout = layoutOf(state);
  const rows = statuses.map(({ node, member, patroniPid, postmasterPid }) => [
    node.name,
    member?.role ?? "-",
    member?.state ?? (patroniPid ? "not in cluster" : "patroni not running"),
    member?.lag === undefined ? "-" : String(member.lag),
    member?.timeline === undefined ? "-" : String(member.timeline),
    `127.0.0.1:${node.postgresPort}`,
    `${patroniPid ?? "-"}/${postmasterPid ?? "-"}`,
  ]);
  const header = ["member", "role", "state", "lag", "timeline", "postgres", "pids"];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)),
  );
  const line = (cells: string[]) =>
    cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  ").trimEnd();
  return [
    `cluster ${layout.scope}, ${state.nodeCount} nodes, folder ${state.baseDir}`,
    `primary (HAProxy)  127.0.0.1:${layout.haproxy.primaryPort}`,
    `replicas (HAProxy) 127.0.0.1:${layout.haproxy.replicaPort}`,
    line(header),
    ...rows.map(line),
    "(lag in bytes; pids: patroni/postmaster)",
  ];
}
