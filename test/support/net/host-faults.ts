import assert from "node:assert/strict";
import { netBounds } from "./bounds.ts";
import { runCommand, runInNamespace } from "./commands.ts";
import type { TestHost } from "./test-host.ts";

/**
 * Faults of a test host's link, made by the kernel: nftables rules in the host's own namespace
 * (partitions, one-way partitions, random loss) and a tbf qdisc on its veth (a narrow link). Each
 * function returns once its rule is in place, read back from the kernel, and its heal removes
 * exactly that rule. The machine's kernel has no netem, so delay, stalls and cuts mid-transfer
 * come from the fault proxy (fault-proxy.ts) instead.
 *
 * Directions are the host's: `inbound` is what the root namespace sends to the host, `outbound`
 * what the host sends. Every rule matches the host's veth only, never its loopback. Rules live in
 * the host's own namespace and go with it.
 */
export type Direction = "both" | "inbound" | "outbound";

export interface HostFault {
  description: string;
  heal(): Promise<void>;
}

/** A fault made of nftables rules; its counters are the evidence that it acted. */
export interface RuleFault extends HostFault {
  matched(): Promise<{ packets: number; bytes: number }>;
}

/** A narrow link; tbf's own statistics show it shaped (overlimits: packets it held back). */
export interface LinkFault extends HostFault {
  shaped(): Promise<{ bytes: number; packets: number; drops: number; overlimits: number }>;
}

export const faultTable = "clearline_faults";

/**
 * The host's two tables, both empty until a fault adds a rule. Drops and loss sit on the host's
 * veth itself (netdev ingress and egress): a packet dropped at egress is lost on the wire as far
 * as the host's sockets can tell (a drop in the output hook would fail a UDP send with EPERM).
 * Resets need the IP stack (inet input and output). Rules match IPv4 only: ARP keeps working,
 * and a fault's counters count the traffic under test.
 */
export async function installFaultTable(namespace: string, hostDevice: string): Promise<void> {
  const hook = (name: string) => `  chain ${name} { type filter hook ${name} device ` +
    `"${hostDevice}" priority filter; policy accept; }`;
  await runInNamespace(namespace, "nft", ["-f", "-"], { input: [
    `table netdev ${faultTable} {`, hook("ingress"), hook("egress"), "}",
    `table inet ${faultTable} {`,
    "  chain input { type filter hook input priority filter; policy accept; }",
    "  chain output { type filter hook output priority filter; policy accept; }",
    "}",
  ].join("\n") });
}

type Chain = "ingress" | "egress" | "input" | "output";
interface NftRule { family: string; table: string; chain: Chain; handle: number; comment?: string;
  expr: Record<string, unknown>[] }

async function rulesOf(host: TestHost): Promise<NftRule[]> {
  const text = await runInNamespace(host.namespace, "nft", ["-j", "list", "ruleset"]);
  const listed = JSON.parse(text) as { nftables: { rule?: NftRule }[] };
  return listed.nftables.flatMap((entry) => entry.rule?.table === faultTable ? [entry.rule] : []);
}

/** The comments of the fault rules in place in a host (one per rule). */
export async function faultRulesIn(host: TestHost): Promise<string[]> {
  return (await rulesOf(host)).map((rule) => rule.comment ?? "(no comment)");
}

let faultSerial = 0;

interface RuleSpec { chain: Chain; statement: string }

const familyOf = (chain: Chain) => chain === "ingress" || chain === "egress" ? "netdev" : "inet";

/** The veth chains a fault of `direction` sits in: ingress (inbound), egress (outbound). */
function deviceChains(direction: Direction): Chain[] {
  if (direction === "both") return ["ingress", "egress"];
  return direction === "inbound" ? ["ingress"] : ["egress"];
}

function countersOf(rules: NftRule[]): { packets: number; bytes: number } {
  const counters = rules.flatMap((rule) => rule.expr.flatMap((e) =>
    e.counter ? [e.counter as { packets: number; bytes: number }] : []));
  const packets = counters.reduce((sum, c) => sum + c.packets, 0);
  return { packets, bytes: counters.reduce((sum, c) => sum + c.bytes, 0) };
}

/** Adds the rules in one nft transaction, reads them back, returns the fault that heals them. */
async function installRules(host: TestHost, description: string,
  specs: RuleSpec[]): Promise<RuleFault> {
  faultSerial += 1;
  const tag = `fault-${faultSerial}`;
  const script = specs.map((s) =>
    `add rule ${familyOf(s.chain)} ${faultTable} ${s.chain} ${s.statement} comment "${tag}"`);
  await runInNamespace(host.namespace, "nft", ["-f", "-"], { input: script.join("\n") });
  const tagged = async () => (await rulesOf(host)).filter((rule) => rule.comment === tag);
  const installed = await tagged();
  assert.equal(installed.length, specs.length, `${description}: rules missing`);
  let healed = false;
  return {
    description,
    matched: async () => countersOf(await tagged()),
    async heal() {
      if (healed) return;
      const deletes = (await tagged()).map((r) =>
        `delete rule ${r.family} ${faultTable} ${r.chain} handle ${r.handle}`);
      await runInNamespace(host.namespace, "nft", ["-f", "-"], { input: deletes.join("\n") });
      assert.equal((await tagged()).length, 0, `${description}: rules left after heal`);
      healed = true;
    },
  };
}

export interface PartitionOptions {
  direction?: Direction;            // both by default
  /** drop: silence, the other side waits for its own timeout; reset: a TCP RST (ICMP for the
   * rest) at once. */
  response?: "drop" | "reset";
}

/**
 * Cuts the host off. A reset partition answers what reaches the host with a TCP reset (the
 * root side's connect is refused, its connection reset); outbound, it resets the host's own
 * sockets when they send, and the root side hears nothing. Resets and ICMP errors the rules
 * make themselves leave the host, so an inbound reset is heard in a reset partition both ways.
 */
export function partition(host: TestHost, options: PartitionOptions = {}): Promise<RuleFault> {
  const direction = options.direction ?? "both";
  const response = options.response ?? "drop";
  const description = `partition ${direction} (${response}) of ${host.label}`;
  if (response === "drop") {
    const statement = "meta protocol ip counter drop";
    const specs = deviceChains(direction).map((chain) => ({ chain, statement }));
    return installRules(host, description, specs);
  }
  const inbound = `iifname "${host.veth.host}"`;
  const outbound = `oifname "${host.veth.host}"`;
  const specs: RuleSpec[] = [];
  const resetUnlessReset = "tcp flags & rst == 0 counter reject with tcp reset";
  if (direction !== "outbound") {
    specs.push(
      { chain: "input", statement: `${inbound} meta l4proto tcp counter reject with tcp reset` },
      { chain: "input", statement: `${inbound} meta l4proto != tcp counter reject` });
  }
  if (direction !== "inbound") {
    specs.push(
      { chain: "output", statement: `${outbound} ${resetUnlessReset}` },
      { chain: "output", statement: `${outbound} meta l4proto != { tcp, icmp } counter reject` });
  }
  return installRules(host, description, specs);
}

/** Drops each packet with probability percent/100, drawn per packet by the kernel (numgen). */
export function loss(host: TestHost,
  options: { percent: number; direction?: Direction }): Promise<RuleFault> {
  const { percent } = options;
  assert(Number.isInteger(percent) && percent > 0 && percent < 100, `${percent}% is not 1..99`);
  const direction = options.direction ?? "both";
  const statement = `meta protocol ip numgen random mod 100 < ${percent} counter drop`;
  return installRules(host, `${percent}% loss ${direction} of ${host.label}`,
    deviceChains(direction).map((chain) => ({ chain, statement })));
}

export interface NarrowLinkOptions {
  rateBitsPerSecond: number;
  burstBytes: number;               // what may pass at line speed before the rate applies
  direction?: Direction;
}

interface QdiscJson { kind: string; root?: boolean; options?: { rate?: number };
  bytes?: number; packets?: number; drops?: number; overlimits?: number }

interface LinkEnd { namespace: string | undefined; device: string }

const tc = (end: LinkEnd, args: string[]) =>
  runCommand("tc", [...(end.namespace ? ["-n", end.namespace] : []), ...args]);

async function rootQdiscOf(end: LinkEnd, withStats = false): Promise<QdiscJson | undefined> {
  const args = [...(withStats ? ["-s"] : []), "-j", "qdisc", "show", "dev", end.device];
  return (JSON.parse(await tc(end, args)) as QdiscJson[]).find((q) => q.root === true);
}

async function shapedBy(ends: LinkEnd[]): Promise<Awaited<ReturnType<LinkFault["shaped"]>>> {
  const sum = { bytes: 0, packets: 0, drops: 0, overlimits: 0 };
  for (const end of ends) {
    const q = await rootQdiscOf(end, true);
    sum.bytes += q?.bytes ?? 0;
    sum.packets += q?.packets ?? 0;
    sum.drops += q?.drops ?? 0;
    sum.overlimits += q?.overlimits ?? 0;
  }
  return sum;
}

/**
 * Narrows the host's link with a token bucket (tc tbf) on the sending end of each direction:
 * inbound shapes the root end's egress, outbound the host end's. Queued packets wait at most
 * netBounds.tbfLatencyMs, then tbf drops them, as a congested link does. The root end is the
 * host's own veth: no other traffic of the machine passes it.
 */
export async function narrowLink(host: TestHost, options: NarrowLinkOptions): Promise<LinkFault> {
  const { rateBitsPerSecond, burstBytes } = options;
  const rateMin = netBounds.tbfRateBitsPerSecondMin;
  assert(rateBitsPerSecond >= rateMin, `${rateBitsPerSecond} bit/s is too slow`);
  assert(burstBytes >= 1_514, "a burst must hold one full Ethernet frame");
  const direction = options.direction ?? "both";
  const ends: LinkEnd[] = [];
  if (direction !== "outbound") ends.push({ namespace: undefined, device: host.veth.root });
  if (direction !== "inbound") ends.push({ namespace: host.namespace, device: host.veth.host });
  for (const end of ends) {
    await tc(end, ["qdisc", "add", "dev", end.device, "root", "tbf",
      "rate", `${rateBitsPerSecond}bit`, "burst", String(burstBytes),
      "latency", `${netBounds.tbfLatencyMs}ms`]);
    const installed = await rootQdiscOf(end);
    assert.equal(installed?.kind, "tbf", `no tbf on ${end.device}`);
    assert.equal(installed.options?.rate, rateBitsPerSecond / 8, `tbf on ${end.device}: rate`);
  }
  let healed = false;
  return {
    description: `narrow link ${direction} of ${host.label}: ${rateBitsPerSecond} bit/s, ` +
      `burst ${burstBytes} B`,
    shaped: () => shapedBy(ends),
    async heal() {
      if (healed) return;
      for (const end of ends) {
        await tc(end, ["qdisc", "del", "dev", end.device, "root"]);
        assert.notEqual((await rootQdiscOf(end))?.kind, "tbf", `tbf left on ${end.device}`);
      }
      healed = true;
    },
  };
}
