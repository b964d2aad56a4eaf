import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { netTestBounds } from "../support/net/bounds.ts";
import { parseJson, runCommand } from "../support/net/commands.ts";
import { faultRulesIn } from "../support/net/host-faults.ts";
import { tempFolderPrefix, vethAliasPrefix } from "../support/net/host-names.ts";
import { startEchoPeer } from "../support/net/peers/node-peer.ts";
import { requireNetworkHarness } from "../support/net/prerequisites.ts";
import { sweepStaleHosts } from "../support/net/stale-hosts.ts";
import { createTestHost, linkExists, type TestHost } from "../support/net/test-host.ts";
import { pollUntil } from "../support/net/wait.ts";

const ip = (...args: string[]) => runCommand("ip", args);
const namespaces = async () => parseJson<{ name: string }>(await ip("-j", "netns", "list"))
  .map((n) => n.name);

/** One TCP round trip from the root namespace to a host's echo peer; resolves with our address. */
async function echoFromRoot(host: TestHost, port: number, text: string): Promise<string> {
  const timeout = netTestBounds.healthyClientTimeoutMs;
  const socket = connect({ host: host.address, port, timeout });
  socket.once("timeout", () => socket.destroy(new Error("the client's own timeout")));
  await once(socket, "connect");
  socket.write(text);
  const [answer] = (await once(socket, "data")) as [Buffer];
  const localAddress = socket.localAddress ?? "";
  socket.destroy();
  expect(answer.toString()).toBe(text);
  return localAddress;
}

/** A pid no process has: one that has just exited. */
async function deadPid(): Promise<number> {
  const child = spawn("true");
  await once(child, "exit");
  return child.pid!;
}

describe("a test host", () => {
  const hosts: TestHost[] = [];
  beforeAll(async () => {
    await requireNetworkHarness();     // fails loudly with the reason on a machine that cannot
  });
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.remove();
  });
  const newHost = async (label: string) => {
    const host = await createTestHost(label);
    hosts.push(host);
    return host;
  };

  it("is reached from the root namespace on its own address, through its own veth", async () => {
    const host = await newHost("reach");
    const [route] = parseJson<{ dev: string }>(await ip("-j", "route", "get", host.address));
    expect(route?.dev).toBe(host.veth.root);
    const peer = await startEchoPeer(host);
    expect(await echoFromRoot(host, peer.tcpPort, "hello")).toBe(host.rootAddress);
    expect(await faultRulesIn(host)).toEqual([]);
  });

  it("gets a /30 and a veth of its own beside another host", async () => {
    const first = await newHost("first");
    const second = await newHost("second");
    expect(second.subnet.cidr).not.toBe(first.subnet.cidr);
    expect(second.veth.root).not.toBe(first.veth.root);
    expect(first.veth.root.length).toBeLessThanOrEqual(15);
    expect(first.namespace).toContain(`-${process.pid}-`);
  });

  it("leaves no namespace, veth, nft table or process behind when removed", async () => {
    const host = await newHost("removed");
    const peer = await startEchoPeer(host);
    await host.remove();
    expect(await namespaces()).not.toContain(host.namespace);
    expect(await linkExists(host.veth.root)).toBe(false);
    const { exitCode, signalCode } = peer.process.child;
    expect(exitCode !== null || signalCode !== null).toBe(true);
  });

  it("sweeps what a dead run left, its processes too, and nothing of a live run", async () => {
    const live = await newHost("live");
    const pid = await deadPid();
    // A tag past any subnet's (16383 is "ckf"), so no host of a concurrent run has its name.
    const tag = `z${(process.pid % 1_296).toString(36).padStart(2, "0")}`;
    const staleNamespace = `clnf-${pid}-1-stale`;
    await ip("netns", "add", staleNamespace);
    await ip("link", "add", `cnf${tag}r`, "type", "veth",
      "peer", "name", `cnf${tag}h`, "netns", staleNamespace);
    const leftover = spawn("ip", ["netns", "exec", staleNamespace, "sleep", "600"],
      { stdio: "ignore" });
    const leftoverExit = once(leftover, "exit");
    // A pair a run left in the root namespace, known by its alias only.
    await ip("link", "add", `cnf${tag}x`, "type", "veth", "peer", "name", `cnf${tag}y`);
    await ip("link", "set", `cnf${tag}x`, "alias", `${vethAliasPrefix}${pid}`);
    const staleFolder = mkdtempSync(path.join(tmpdir(), `${tempFolderPrefix}${pid}-postgres-`));
    await pollUntil(async () => (await ip("netns", "pids", staleNamespace)).trim() !== "",
      "the leftover process to run");

    const report = await sweepStaleHosts();

    // Contain, not equal: a crashed concurrent run's leftovers on this machine are swept too.
    expect(report.namespaces).toContain(staleNamespace);
    expect(report.veths).toContain(`cnf${tag}x`);
    expect(report.tempFolders).toContain(path.basename(staleFolder));
    await leftoverExit;
    await pollUntil(async () => !(await linkExists(`cnf${tag}r`)), "the stale veth to go");
    expect(await linkExists(`cnf${tag}x`)).toBe(false);
    expect(existsSync(staleFolder)).toBe(false);
    expect(await namespaces()).toContain(live.namespace);
    expect(await linkExists(live.veth.root)).toBe(true);
  });
});
