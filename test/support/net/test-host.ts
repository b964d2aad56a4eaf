import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomInt } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { netBounds } from "./bounds.ts";
import { CommandFailed, parseJson, runCommand, runInNamespace, type CommandOptions }
  from "./commands.ts";
import { installFaultTable } from "./host-faults.ts";
import { spawnInNamespace, type HostProcess, type HostProcessOptions } from "./host-process.ts";
import { addressInBlock, blocksOverlap, namespaceNameOf, subnetAt, vethAliasPrefix, vethNamesOf,
  vethPrefix, type Subnet } from "./host-names.ts";
import { NetworkHarnessUnavailable, requireNetworkHarness } from "./prerequisites.ts";
import { killProcessesIn, sweepStaleHostsOnce } from "./stale-hosts.ts";
import { pollUntil } from "./wait.ts";

/**
 * A test host: a network namespace joined to the root namespace by its own veth pair and /30.
 * Its peers (PostgreSQL, NATS, a node script) listen on `address`; the root namespace, where
 * `clearline serve` or a test runs, reaches it at that address through the veth and is seen by
 * it as `rootAddress`. Faults (host-faults.ts) are rules in the host's namespace and a qdisc on
 * its veth, so they never touch any other traffic of the machine.
 */
export interface TestHost {
  label: string;
  namespace: string;
  subnet: Subnet;
  address: string;           // the host's own address (subnet.hostAddress)
  rootAddress: string;       // the root namespace's end (subnet.rootAddress)
  veth: Veth;
  /** Starts a long-running process in the host; remove() stops it. */
  spawn(command: string, args: string[], options?: HostProcessOptions): HostProcess;
  /** Runs a command in the host to its end and returns its stdout. */
  run(command: string, args: string[], options?: CommandOptions): Promise<string>;
  /** Stops its processes, deletes the namespace (the veth and every rule go with it). */
  remove(): Promise<void>;
}

interface Veth { root: string; host: string }

const liveHosts = new Set<TestHost>();
let serial = 0;

// A run that ends without removing its hosts (a failed hook, process.exit) still removes them;
// a killed run leaves them to the next run's sweep (stale-hosts.ts).
process.once("exit", () => {
  for (const host of liveHosts) {
    try {
      const pids = execFileSync("ip", ["netns", "pids", host.namespace], { encoding: "utf8" });
      for (const pid of pids.split("\n").filter(Boolean)) process.kill(Number(pid), "SIGKILL");
      execFileSync("ip", ["netns", "del", host.namespace], { stdio: "ignore" });
    } catch {
      // best effort at exit; the next run's sweep removes what is left
    }
  }
});

interface RouteJson { dst: string; dev?: string }
interface AddressJson { ifname: string; addr_info: { local: string; prefixlen: number }[] }

/** Addresses and routes of the root namespace that are not test hosts' and lie in `subnet`. */
async function collisionsWith(subnet: Subnet): Promise<string[]> {
  const found: string[] = [];
  const links = parseJson<AddressJson>(await runCommand("ip", ["-j", "-4", "address", "show"]));
  for (const link of links.filter((l) => !l.ifname.startsWith(vethPrefix))) {
    for (const a of link.addr_info.filter((a) => addressInBlock(a.local, subnet.cidr))) {
      found.push(`address ${a.local}/${a.prefixlen} on ${link.ifname}`);
    }
  }
  const routes = parseJson<RouteJson>(
    await runCommand("ip", ["-j", "-4", "route", "show", "table", "all"]));
  for (const route of routes) {
    if (route.dst === "default" || route.dev?.startsWith(vethPrefix)) continue;
    const block = route.dst.includes("/") ? route.dst : `${route.dst}/32`;
    // A broader route (10.0.0.0/8 to a VPN) loses to the host's /30; one of /16 or narrower is
    // someone else's use of the range.
    if (Number(block.split("/")[1]) >= 16 && blocksOverlap(block, subnet.cidr)) {
      found.push(`route ${route.dst} via ${route.dev ?? "?"}`);
    }
  }
  return found;
}

/** Claims a free /30 by creating the veth named after it: the claim is atomic. */
async function claimSubnetAndVeth(namespace: string): Promise<{ subnet: Subnet; veth: Veth }> {
  const start = randomInt(netBounds.subnetsInRange);
  const collisions: string[] = [];
  for (let attempt = 0; attempt < netBounds.subnetClaimAttemptsMax; attempt++) {
    const subnet = subnetAt((start + attempt) % netBounds.subnetsInRange);
    const found = await collisionsWith(subnet);
    if (found.length > 0) {
      collisions.push(...found);
      continue;
    }
    const veth = vethNamesOf(subnet);
    try {
      // The host's end is made in its namespace: the pair lives and dies with the namespace.
      await runCommand("ip", ["link", "add", veth.root, "type", "veth",
        "peer", "name", veth.host, "netns", namespace]);
    } catch (error) {
      if (error instanceof CommandFailed && /File exists/.test(error.stderr)) continue;  // taken
      throw error;
    }
    return { subnet, veth };
  }
  throw new NetworkHarnessUnavailable(`no free /30 in 10.213.0.0/16 after ` +
    `${netBounds.subnetClaimAttemptsMax} tries; this machine's own use of the range: ` +
    `${[...new Set(collisions)].join("; ") || "none"}`);
}

/** IPv4 only on the veth: no IPv6 neighbour discovery in a fault's counters. */
async function disableIpv6(namespace: string, veth: Veth): Promise<void> {
  if (!existsSync("/proc/sys/net/ipv6")) return;          // a kernel without IPv6
  writeFileSync(`/proc/sys/net/ipv6/conf/${veth.root}/disable_ipv6`, "1");
  // /proc/sys/net shows the namespace of the process reading it: a shell in the host's namespace.
  const setting = `/proc/sys/net/ipv6/conf/${veth.host}/disable_ipv6`;
  await runInNamespace(namespace, "sh", ["-c", `echo 1 > ${setting}`]);
}

async function wire(namespace: string, subnet: Subnet, veth: Veth): Promise<void> {
  const ip = (...args: string[]) => runCommand("ip", args);
  await ip("link", "set", veth.root, "alias", `${vethAliasPrefix}${process.pid}`);
  await disableIpv6(namespace, veth);
  await ip("address", "add", `${subnet.rootAddress}/30`, "dev", veth.root);
  await ip("link", "set", veth.root, "up");
  await ip("-n", namespace, "address", "add", `${subnet.hostAddress}/30`, "dev", veth.host);
  await ip("-n", namespace, "link", "set", veth.host, "up");
  // The root namespace must reach the host through its veth and nothing else (a policy rule or
  // a narrower route of this machine would divert it).
  const [route] = parseJson<{ dev: string }>(await ip("-j", "route", "get", subnet.hostAddress));
  if (route?.dev !== veth.root) {
    throw new NetworkHarnessUnavailable(`${subnet.hostAddress} routes via ` +
      `${route?.dev ?? "nothing"}, not the host's veth ${veth.root}: this machine's routing ` +
      "collides with 10.213.0.0/16");
  }
}

export async function linkExists(name: string): Promise<boolean> {
  const links = parseJson<{ ifname: string }>(await runCommand("ip", ["-j", "link", "show"]));
  return links.some((link) => link.ifname === name);
}

async function removeNamespace(namespace: string, rootVeth: string | undefined): Promise<void> {
  await killProcessesIn(namespace).catch(() => []);
  await runCommand("ip", ["netns", "del", namespace]);
  if (rootVeth === undefined) return;
  // The kernel frees the namespace, and the veth pair with it, once its last process has gone.
  await pollUntil(async () => !(await linkExists(rootVeth)), `${rootVeth} to go with ${namespace}`);
}

/** Creates a test host named after `label` (names are unique per process and pid). */
export async function createTestHost(label: string): Promise<TestHost> {
  await requireNetworkHarness();
  await sweepStaleHostsOnce();
  assert(liveHosts.size < netBounds.hostsPerProcessMax, "too many live test hosts: a leak?");
  serial += 1;
  // The random part keeps a name unique even against a dead run that had this pid.
  const unique = `${randomInt(36 ** 4).toString(36)}-${label}`;
  const namespace = namespaceNameOf(process.pid, serial, unique);
  let claimed: { subnet: Subnet; veth: Veth } | undefined;
  try {
    await runCommand("ip", ["netns", "add", namespace]);
    await runCommand("ip", ["-n", namespace, "link", "set", "lo", "up"]);
    claimed = await claimSubnetAndVeth(namespace);
    await wire(namespace, claimed.subnet, claimed.veth);
    await installFaultTable(namespace, claimed.veth.host);
  } catch (error) {
    await removeNamespace(namespace, claimed?.veth.root).catch(() => undefined);
    if (error instanceof NetworkHarnessUnavailable) throw error;
    throw new NetworkHarnessUnavailable(`could not create test host ${label}: ` +
      `${(error as Error).message}`);
  }
  return hostOf(label, namespace, claimed.subnet, claimed.veth);
}

function hostOf(label: string, namespace: string, subnet: Subnet, veth: Veth): TestHost {
  const processes: HostProcess[] = [];
  let removed = false;
  const host: TestHost = {
    label, namespace, subnet, veth,
    address: subnet.hostAddress,
    rootAddress: subnet.rootAddress,
    spawn(command, args, options) {
      assert(!removed, `test host ${label} was removed`);
      const started = spawnInNamespace(namespace, command, args, options);
      processes.push(started);
      return started;
    },
    run: (command, args, options) => runInNamespace(namespace, command, args, options),
    async remove() {
      if (removed) return;
      removed = true;
      await Promise.all(processes.map((p) => p.stop()));
      await removeNamespace(namespace, veth.root);
      liveHosts.delete(host);
    },
  };
  liveHosts.add(host);
  return host;
}
