import { execFileSync } from "node:child_process";
import { netBounds } from "./bounds.ts";
import { CommandFailed, runCommand, runInNamespace } from "./commands.ts";
import { namespacePrefix } from "./host-names.ts";

/**
 * Thrown when this machine cannot give the harness its test hosts. Its message starts with a
 * line nobody can miss: a test that needs network namespaces fails with the reason, never skips.
 */
export class NetworkHarnessUnavailable extends Error {
  constructor(reason: string) {
    super(`NETWORK FAULT HARNESS CANNOT RUN: ${reason}`);
    this.name = "NetworkHarnessUnavailable";
  }
}

function onPath(command: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Debian's nftables package, installed non-interactively when `nft` is missing (fresh CI). */
async function installNftables(): Promise<void> {
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const lock = ["-o", `DPkg::Lock::Timeout=${netBounds.aptLockWaitSeconds}`];
  const install = ["-y", "-q", "--no-install-recommends", ...lock, "install", "nftables"];
  const timeoutMs = netBounds.packageInstallTimeoutMs;
  try {
    await runCommand("apt-get", install, { env, timeoutMs });
  } catch {
    // A fresh machine's package lists may be empty or stale: refresh them once and try again.
    await runCommand("apt-get", ["-q", ...lock, "update"], { env, timeoutMs });
    await runCommand("apt-get", install, { env, timeoutMs });
  }
}

const requiredCommands =
  [["ip", "iproute2"], ["tc", "iproute2"], ["setpriv", "util-linux"]] as const;

async function requireTools(): Promise<void> {
  if (process.getuid?.() !== 0) {
    throw new NetworkHarnessUnavailable(
      "network namespaces, veth pairs, nftables and tc need root; this process runs as uid " +
      `${String(process.getuid?.())}. CI runs as root; run these tests as root.`);
  }
  for (const [command, debianPackage] of requiredCommands) {
    if (!onPath(command)) {
      throw new NetworkHarnessUnavailable(
        `\`${command}\` is missing: install the Debian package ${debianPackage}`);
    }
  }
  if (onPath("nft")) return;
  try {
    await installNftables();
  } catch (error) {
    throw new NetworkHarnessUnavailable("`nft` is missing and installing the Debian package " +
      `nftables with apt-get failed: ${(error as Error).message}`);
  }
  if (!onPath("nft")) {
    throw new NetworkHarnessUnavailable("apt-get installed nftables but `nft` is not on PATH");
  }
}

function kernelProbeSteps(probe: string): [string, () => Promise<unknown>][] {
  const ip = (...args: string[]) => () => runCommand("ip", args);
  const egressChain = 'chain egress { type filter hook egress device "probe0" priority filter; }';
  return [
    ["create a network namespace (ip netns add)", ip("netns", "add", probe)],
    ["bring up lo in it", ip("-n", probe, "link", "set", "lo", "up")],
    ["add a veth pair in it", ip("-n", probe, "link", "add", "probe0", "type", "veth", "peer",
      "name", "probe1")],
    ["add an nftables table in it (kernel nf_tables)",
      () => runInNamespace(probe, "nft", ["add table inet clearline_probe"])],
    ["add an nftables egress chain on a device (kernel 5.16+, CONFIG_NETFILTER_EGRESS)",
      () => runInNamespace(probe, "nft", ["-f", "-"],
        { input: `table netdev clearline_probe {\n  ${egressChain}\n}` })],
    ["add a tbf qdisc in it (kernel sch_tbf)", () => runCommand("tc", ["-n", probe, "qdisc", "add",
      "dev", "probe0", "root", "tbf", "rate", "1mbit", "burst", "16kb", "latency", "50ms"])],
  ];
}

/** Makes a namespace with a veth, nft tables and a tbf once, so a missing feature is named. */
async function probeKernel(): Promise<void> {
  const probe = `${namespacePrefix}${process.pid}-probe`;
  try {
    for (const [what, step] of kernelProbeSteps(probe)) {
      try {
        await step();
      } catch (error) {
        const detail = error instanceof CommandFailed ? error.message : String(error);
        throw new NetworkHarnessUnavailable(`could not ${what}: ${detail}`);
      }
    }
  } finally {
    await runCommand("ip", ["netns", "del", probe]).catch(() => undefined);
  }
}

let ready: Promise<void> | undefined;

/**
 * Resolves when this machine can make test hosts and their faults: root, iproute2 (ip, tc),
 * nftables (installed with apt-get when missing), and a kernel with namespaces, veth, nf_tables
 * (with the netdev egress hook) and tbf. Rejects with NetworkHarnessUnavailable naming what is
 * missing. Checked once per process.
 */
export function requireNetworkHarness(): Promise<void> {
  ready ??= requireTools().then(probeKernel);
  return ready;
}
