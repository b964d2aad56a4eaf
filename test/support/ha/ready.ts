import { layoutOf, primaryUrl, replicaUrl, type ClusterState } from "./layout.ts";
import { haLimits } from "./limits.ts";
import { leaderOf, livePatroniPid, livePostmasterPid, readMembers } from "./members.ts";
import { logTail, queryOnce, WaitAborted, waitFor, WaitTimeout } from "./probes.ts";

interface Replication {
  standby: boolean;
  streaming: number;
  sync: number;
}

const replicationSql = `
  SELECT pg_is_in_recovery() AS standby,
         (SELECT count(*)::int FROM pg_stat_replication WHERE state = 'streaming') AS streaming,
         (SELECT count(*)::int FROM pg_stat_replication WHERE sync_state = 'sync') AS sync`;

/**
 * Waits, in order, for the events that make the cluster usable, each bounded by what is left of
 * `boundMs`: Patroni reports a running leader, a synchronous standby and every member running;
 * the primary, reached through HAProxy, streams to every standby with one of them synchronous;
 * a commit through HAProxy is acknowledged (so it is on the synchronous standby); the replica
 * port reaches a standby. A wait that fails names its event and shows the logs.
 */
export async function waitClusterReady(
  state: ClusterState,
  boundMs: number,
  log: (line: string) => void,
): Promise<void> {
  const deadline = Date.now() + boundMs;
  const left = () => Math.max(0, deadline - Date.now());
  const standbys = state.nodeCount - 1;
  try {
    await waitFor("Patroni: a leader, a sync standby, every member running", left(), async () => {
      const exited = layoutOf(state).nodes.filter((node) => livePatroniPid(node) === undefined);
      if (exited.length > 0) {
        throw new WaitAborted(`Patroni exited on ${exited.map((node) => node.name).join(", ")}`);
      }
      const members = await readMembers(layoutOf(state));
      if (!members || members.length !== state.nodeCount || !leaderOf(members)) return undefined;
      const running = members.every((member) => ["running", "streaming"].includes(member.state));
      const sync = members.some((member) => member.role === "sync_standby");
      return running && sync ? true : undefined;
    });
    await waitFor(`primary through HAProxy streaming to ${standbys} (1 sync)`, left(), async () => {
      const [row] = await queryOnce<Replication>(primaryUrl(state), replicationSql);
      const ready = row && !row.standby && row.streaming === standbys && row.sync === 1;
      return ready ? true : undefined;
    });
    // txid_current() makes the transaction write a commit record, which waits for the standby.
    await waitFor("a commit through HAProxy acknowledged", left(), async () =>
      (await queryOnce(primaryUrl(state), "SELECT txid_current()")).length === 1 ? true : undefined,
    );
    await waitFor("the replica port reaching a standby", left(), async () => {
      const [row] = await queryOnce<{ standby: boolean }>(
        replicaUrl(state),
        "SELECT pg_is_in_recovery() AS standby",
      );
      return row?.standby ? true : undefined;
    });
  } catch (error) {
    if (!(error instanceof WaitTimeout)) throw error;
    throw new Error(`cluster did not come up: ${error.message}\n${clusterLogs(state)}`);
  }
  log("primary writable through HAProxy, synchronous standby streaming");
}

/** Which processes of the cluster live, then the tail of each log. */
export function clusterLogs(state: ClusterState): string {
  const layout = layoutOf(state);
  const alive = (pid: number | undefined) => (pid === undefined ? "not running" : `pid ${pid}`);
  const processes = layout.nodes.map(
    (node) =>
      `${node.name}: patroni ${alive(livePatroniPid(node))}, ` +
      `postgres ${alive(livePostmasterPid(node))}`,
  );
  const tails = [
    ...processes,
    ...layout.nodes.map((node) => logTail(node.logFile)),
    logTail(layout.haproxy.logFile, 10),
    logTail(layout.etcd.logFile, 10),
  ];
  return `${tails.join("\n")}\n(the cluster is left as it is for a look; \`npm run ha -- down ` +
    `--port-base ${state.portBase}\` removes it)`;
}

/** A node is back: Patroni lists it running as a standby and the primary streams to it. */
export async function waitMemberStreaming(
  state: ClusterState,
  name: string,
  boundMs: number = haLimits.nodeRejoinMs,
): Promise<void> {
  const layout = layoutOf(state);
  const node = layout.nodes.find((candidate) => candidate.name === name);
  try {
    await waitFor(`${name} running as a standby`, boundMs, async () => {
      if (node && livePatroniPid(node) === undefined) throw new WaitAborted("its Patroni exited");
      const members = await readMembers(layout);
      const member = members?.find((candidate) => candidate.name === name);
      const running = member && ["running", "streaming"].includes(member.state);
      return running && member.role !== "leader" ? true : undefined;
    });
    await waitFor(`the primary streaming to ${name}`, boundMs, async () => {
      const rows = await queryOnce(
        primaryUrl(state),
        "SELECT 1 FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'",
        [name],
      );
      return rows.length === 1 ? true : undefined;
    });
  } catch (error) {
    if (!(error instanceof WaitTimeout) || !node) throw error;
    throw new Error(`${name} did not rejoin: ${error.message}\n${logTail(node.logFile)}`);
  }
}
