import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runHa } from "../support/ha/command.ts";
import {
  allPorts,
  layoutOf,
  portIsFree,
  readState,
  stateFilePath,
  type ClusterState,
} from "../support/ha/index.ts";

// Ports of its own, apart from failover.test.ts (15500) and a cluster kept up by hand (15400).
const portBase = 15_600;
const onPorts = ["--port-base", String(portBase)];

let state: ClusterState;

/** What `ps` shows of the cluster: anything naming its folder, and every backend of its nodes. */
function clusterProcesses(): string[] {
  const scope = layoutOf(state).scope;
  return execFileSync("ps", ["-eo", "pid=,stat=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((line) => !/^\s*\d+\s+Z/.test(line))
    .filter((line) => line.includes(state.baseDir) || line.includes(`postgres: ${scope}: `));
}

/** The System V shared memory ids the nodes' postmaster.pid files name (line 7: key and id). */
function nodeSharedMemoryIds(): string[] {
  return layoutOf(state).nodes.map((node) => {
    const lines = readFileSync(`${node.dataDir}/postmaster.pid`, "utf8").split("\n");
    return lines[6]?.trim().split(/\s+/)[1] ?? "";
  });
}

function sharedMemoryIdsInUse(): string[] {
  return readFileSync("/proc/sysvipc/shm", "utf8")
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s+/)[1] ?? "");
}

beforeAll(async () => {
  // What an earlier, interrupted run left on these ports is removed first (down is idempotent).
  await runHa(["down", ...onPorts]);
  await runHa(["up", ...onPorts]);
  const known = readState(portBase);
  if (!known) throw new Error("up wrote no state file");
  state = known;
});

afterAll(async () => {
  // Idempotent: a no-op when the test's own down worked.
  await runHa(["down", ...onPorts]);
});

it("down leaves no process, folder, port or shared memory behind, even after a kill", async () => {
  const segments = nodeSharedMemoryIds();
  expect(segments.every((id) => /^\d+$/.test(id))).toBe(true);
  expect(clusterProcesses().length).toBeGreaterThan(state.nodeCount * 5);
  // Mid-failover: a killed postmaster's segment and a leader key still in etcd.
  await runHa(["kill-primary", ...onPorts]);
  await runHa(["down", ...onPorts]);
  expect(clusterProcesses()).toEqual([]);
  expect(existsSync(state.baseDir)).toBe(false);
  expect(existsSync(stateFilePath(portBase))).toBe(false);
  const taken: number[] = [];
  for (const port of allPorts(layoutOf(state))) if (!(await portIsFree(port))) taken.push(port);
  expect(taken).toEqual([]);
  const inUse = sharedMemoryIdsInUse();
  expect(segments.filter((id) => inUse.includes(id))).toEqual([]);
});
