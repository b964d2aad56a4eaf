import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * Where everything of one HA test cluster lives: its ports (all on 127.0.0.1, counted from one
 * port base), its folders and its files. A cluster is known by its port base, because ports are
 * what two clusters on one machine cannot share; the state file named after it lets `down`,
 * `status`, `kill-primary` and `restart-node` find the folder `up` chose.
 */
export const defaultPortBase = 15_400;
export const nodeCountsAllowed = [2, 3] as const;
export type NodeCount = (typeof nodeCountsAllowed)[number];

export const postgresBinDir = "/usr/lib/postgresql/15/bin";
// The only superuser; the clearline tests connect as it to create their databases.
export const superuserName = "postgres";
export const replicationUserName = "replicator";

export interface NodeLayout {
  name: string;
  postgresPort: number;
  restPort: number;
  dir: string;
  dataDir: string;
  configFile: string;
  pidFile: string;
  logFile: string;
}

export interface ServiceLayout {
  pidFile: string;
  logFile: string;
}

export interface ClusterLayout {
  portBase: number;
  baseDir: string;
  scope: string;
  etcd: ServiceLayout & { clientPort: number; peerPort: number; dataDir: string };
  haproxy: ServiceLayout & {
    primaryPort: number;
    replicaPort: number;
    statsPort: number;
    configFile: string;
  };
  nodes: NodeLayout[];
}

/** What `up` writes before it starts anything, so that `down` can undo a half-started cluster. */
export interface ClusterState {
  portBase: number;
  nodeCount: NodeCount;
  baseDir: string;
  // Whether `up` made the folder (always true today: a given folder must not exist yet).
  createdBaseDir: boolean;
  password: string;
  startedAt: string;
}

export function layoutCluster(baseDir: string, portBase: number, nodeCount: number): ClusterLayout {
  const runDir = path.join(baseDir, "run");
  const logDir = path.join(baseDir, "log");
  const service = (name: string): ServiceLayout => ({
    pidFile: path.join(runDir, `${name}.pid`),
    logFile: path.join(logDir, `${name}.log`),
  });
  const nodes: NodeLayout[] = [];
  for (let index = 1; index <= nodeCount; index += 1) {
    const name = `node${index}`;
    const dir = path.join(baseDir, name);
    nodes.push({
      name,
      postgresPort: portBase + 10 + index,
      restPort: portBase + 20 + index,
      dir,
      dataDir: path.join(dir, "data"),
      configFile: path.join(dir, "patroni.yml"),
      ...service(name),
    });
  }
  return {
    portBase,
    baseDir,
    // Also PostgreSQL's cluster_name, so `ps` shows which cluster a backend belongs to.
    scope: `clearline-ha-${portBase}`,
    etcd: {
      ...service("etcd"),
      clientPort: portBase,
      peerPort: portBase + 1,
      dataDir: path.join(baseDir, "etcd"),
    },
    haproxy: {
      ...service("haproxy"),
      primaryPort: portBase + 2,
      replicaPort: portBase + 3,
      statsPort: portBase + 4,
      configFile: path.join(baseDir, "haproxy.cfg"),
    },
    nodes,
  };
}

export function layoutOf(state: ClusterState): ClusterLayout {
  return layoutCluster(state.baseDir, state.portBase, state.nodeCount);
}

export function allPorts(layout: ClusterLayout): number[] {
  const { etcd, haproxy, nodes } = layout;
  return [
    etcd.clientPort,
    etcd.peerPort,
    haproxy.primaryPort,
    haproxy.replicaPort,
    haproxy.statsPort,
    ...nodes.flatMap((node) => [node.postgresPort, node.restPort]),
  ];
}

export function stateFilePath(portBase: number): string {
  return path.join(tmpdir(), `clearline-ha-${portBase}.state.json`);
}

export function readState(portBase: number): ClusterState | undefined {
  const file = stateFilePath(portBase);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, "utf8")) as ClusterState;
}

export function writeState(state: ClusterState): void {
  const file = stateFilePath(state.portBase);
  // Written whole or not at all, readable by root only: it holds the cluster's password.
  writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

export function removeState(portBase: number): void {
  rmSync(stateFilePath(portBase), { force: true });
}

export function newPassword(): string {
  return randomBytes(18).toString("hex");
}

function url(password: string, port: number, database: string): string {
  return `postgres://${superuserName}:${password}@127.0.0.1:${port}/${database}`;
}

/** The primary through HAProxy: what clearline's DATABASE_URL points at. */
export function primaryUrl(state: ClusterState, database = "postgres"): string {
  return url(state.password, layoutOf(state).haproxy.primaryPort, database);
}

/** Any streaming standby through HAProxy (read-only). */
export function replicaUrl(state: ClusterState, database = "postgres"): string {
  return url(state.password, layoutOf(state).haproxy.replicaPort, database);
}

/** One node directly, bypassing HAProxy: for tests that look at a given standby. */
export function nodeUrl(state: ClusterState, node: NodeLayout, database = "postgres"): string {
  return url(state.password, node.postgresPort, database);
}
