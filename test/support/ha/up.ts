import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { etcdArguments, haproxyConfig, patroniConfig } from "./configs.ts";
import { down } from "./down.ts";
import {
  allPorts,
  layoutCluster,
  newPassword,
  primaryUrl,
  readState,
  writeState,
  type ClusterLayout,
  type ClusterState,
  type NodeCount,
} from "./layout.ts";
import { haLimits } from "./limits.ts";
import { ensurePackages } from "./packages.ts";
import { livePatroniPid } from "./members.ts";
import { getJson, logTail, portIsFree, waitFor } from "./probes.ts";
import { chownTo, isOurs, readPidFile, startDetached, systemUser } from "./processes.ts";
import { waitClusterReady } from "./ready.ts";

export interface UpOptions {
  portBase: number;
  nodeCount: NodeCount;
  // Default: a new temporary folder. A given folder must not exist yet (down removes it).
  baseDir?: string;
  log: (line: string) => void;
}

export interface UpResult {
  state: ClusterState;
  url: string;
  startupMs: number;
}

/**
 * Starts etcd, the Patroni nodes and HAProxy, and returns once the primary answers writes through
 * HAProxy with a synchronous standby and every other node streaming. The state file is written
 * before anything starts, so `down` can remove a cluster that failed half-way.
 */
export async function up(options: UpOptions): Promise<UpResult> {
  const startedMs = performance.now();
  if (process.getuid?.() !== 0) {
    throw new Error("the HA cluster needs root: it installs packages and runs nodes as postgres");
  }
  ensurePackages(options.log);
  await clearEarlierCluster(options);
  const baseDir = makeBaseDir(options);
  const state: ClusterState = {
    portBase: options.portBase,
    nodeCount: options.nodeCount,
    baseDir,
    createdBaseDir: true,
    password: newPassword(),
    startedAt: new Date().toISOString(),
  };
  writeState(state);
  const layout = layoutCluster(baseDir, options.portBase, options.nodeCount);
  writeFiles(layout, state.password);
  await startEtcd(layout, options.log);
  for (const node of layout.nodes) startPatroni(layout, node.name);
  startHaproxy(layout);
  options.log(`started patroni on ${layout.nodes.map((node) => node.name).join(", ")} and haproxy`);
  await waitClusterReady(state, haLimits.clusterReadyMs, options.log);
  return { state, url: primaryUrl(state), startupMs: Math.round(performance.now() - startedMs) };
}

/** A live cluster on these ports is an error; the remains of a dead one are removed. */
async function clearEarlierCluster(options: UpOptions): Promise<void> {
  const earlier = readState(options.portBase);
  if (earlier) {
    const layout = layoutCluster(earlier.baseDir, earlier.portBase, earlier.nodeCount);
    const live = layout.nodes.some((node) => livePatroniPid(node) !== undefined);
    if (live) {
      throw new Error(
        `a cluster is already up on port base ${options.portBase} (folder ${earlier.baseDir}); ` +
          `run \`npm run ha -- down --port-base ${options.portBase}\` first`,
      );
    }
    options.log(`removing the remains of an earlier cluster in ${earlier.baseDir}`);
    await down({ portBase: options.portBase, log: options.log });
  }
  const probe = layoutCluster("/", options.portBase, options.nodeCount);
  const taken: number[] = [];
  for (const port of allPorts(probe)) if (!(await portIsFree(port))) taken.push(port);
  if (taken.length > 0) {
    throw new Error(
      `ports in use on 127.0.0.1: ${taken.join(", ")}; choose another --port-base ` +
        `(the cluster uses ${options.portBase}..${options.portBase + 20 + options.nodeCount})`,
    );
  }
}

function makeBaseDir(options: UpOptions): string {
  let baseDir: string;
  if (options.baseDir) {
    baseDir = path.resolve(options.baseDir);
    if (existsSync(baseDir) && readdirSync(baseDir).length > 0) {
      throw new Error(`${baseDir} is not empty; down removes the folder, so it must be new`);
    }
    mkdirSync(baseDir, { recursive: true, mode: 0o700 });
  } else {
    baseDir = mkdtempSync(path.join(tmpdir(), `clearline-ha-${options.portBase}-`));
  }
  const socket = path.join(baseDir, "node1", `.s.PGSQL.${options.portBase + 11}`);
  if (Buffer.byteLength(socket) > haLimits.socketPathBytesMax) {
    throw new Error(`folder ${baseDir} is too long for PostgreSQL's Unix socket path`);
  }
  chownTo(systemUser("postgres"), baseDir);
  return baseDir;
}

function writeFiles(layout: ClusterLayout, password: string): void {
  const postgres = systemUser("postgres");
  const folders = [
    path.join(layout.baseDir, "run"),
    path.join(layout.baseDir, "log"),
    ...layout.nodes.map((node) => node.dir),
  ];
  for (const folder of folders) {
    mkdirSync(folder, { mode: 0o700 });
    chownTo(postgres, folder);
  }
  for (const node of layout.nodes) {
    writeFileSync(node.configFile, patroniConfig(layout, node, password), { mode: 0o600 });
    chownTo(postgres, node.configFile);
  }
  writeFileSync(layout.haproxy.configFile, haproxyConfig(layout));
  chownTo(postgres, layout.haproxy.configFile);
}

async function startEtcd(layout: ClusterLayout, log: (line: string) => void): Promise<void> {
  const { etcd } = layout;
  startDetached({
    command: "/usr/bin/etcd",
    args: etcdArguments(layout),
    user: systemUser("postgres"),
    cwd: layout.baseDir,
    pidFile: etcd.pidFile,
    logFile: etcd.logFile,
  });
  try {
    await waitFor("etcd answering /health", haLimits.etcdReadyMs, async () => {
      const pid = readPidFile(etcd.pidFile);
      if (pid === undefined || !isOurs(pid, etcd.dataDir)) throw new Error("etcd exited");
      const { body } = await getJson<{ health?: string }>(
        `http://127.0.0.1:${etcd.clientPort}/health`,
      );
      return body.health === "true" ? true : undefined;
    });
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${logTail(etcd.logFile)}`);
  }
  log(`etcd up on 127.0.0.1:${etcd.clientPort}`);
}

export function startPatroni(layout: ClusterLayout, nodeName: string): number {
  const node = layout.nodes.find((candidate) => candidate.name === nodeName);
  if (!node) throw new Error(`no node ${nodeName} in ${layout.scope}`);
  return startDetached({
    command: "/usr/bin/patroni",
    args: [node.configFile],
    user: systemUser("postgres"),
    cwd: node.dir,
    pidFile: node.pidFile,
    logFile: node.logFile,
  });
}

function startHaproxy(layout: ClusterLayout): void {
  const { haproxy } = layout;
  startDetached({
    // -db: stay in the foreground (no fork), so the pid we record is HAProxy's own.
    command: "/usr/sbin/haproxy",
    args: ["-db", "-f", haproxy.configFile],
    user: systemUser("postgres"),
    cwd: layout.baseDir,
    pidFile: haproxy.pidFile,
    logFile: haproxy.logFile,
  });
}
