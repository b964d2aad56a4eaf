import assert from "node:assert/strict";
import { netBounds } from "./bounds.ts";

/**
 * Names and addresses of test hosts. Every name carries a prefix nobody else uses and the pid of
 * the process that made it, so a later run can sweep what a crashed run left (only when that pid
 * is dead), and concurrent runs on one machine never touch each other's hosts.
 */
export const namespacePrefix = "clnf-";              // clnf-<pid>-<serial>-<label>
export const vethPrefix = "cnf";                     // cnf<subnet>r (root end), cnf<subnet>h (host)
export const vethAliasPrefix = "clearline-netfault pid="; // the root end's ifalias: who made it
export const tempFolderPrefix = "clearline-nf-";     // clearline-nf-<pid>-<what>-XXXXXX in tmpdir
const vethNameCharsMax = 15;                         // IFNAMSIZ - 1

/**
 * The harness's private range: 10.213.0.0/16 cut into /30s. 10/8 is private (RFC 1918); .213 is
 * an octet few networks pick. A claim checks the machine's addresses and routes anyway.
 */
export const rangePrefix = [10, 213] as const;

export interface Subnet {
  index: number;         // 0 .. netBounds.subnetsInRange - 1
  cidr: string;          // 10.213.x.y/30
  rootAddress: string;   // .1 of the /30: the root namespace's end of the veth
  hostAddress: string;   // .2 of the /30: the host's own address, where its peers listen
}

export function subnetAt(index: number): Subnet {
  assert(Number.isInteger(index) && index >= 0 && index < netBounds.subnetsInRange);
  const third = index >> 6;
  const fourth = (index & 63) * 4;
  const base = `${rangePrefix[0]}.${rangePrefix[1]}.${third}`;
  return {
    index,
    cidr: `${base}.${fourth}/30`,
    rootAddress: `${base}.${fourth + 1}`,
    hostAddress: `${base}.${fourth + 2}`,
  };
}

/** Both ends of a host's veth; the name holds the subnet, so creating it claims the subnet. */
export function vethNamesOf(subnet: Subnet): { root: string; host: string } {
  const tag = subnet.index.toString(36).padStart(3, "0");
  const names = { root: `${vethPrefix}${tag}r`, host: `${vethPrefix}${tag}h` };
  assert(names.root.length <= vethNameCharsMax && names.host.length <= vethNameCharsMax);
  return names;
}

export function namespaceNameOf(pid: number, serial: number, label: string): string {
  const readable = label.toLowerCase().replace(/[^a-z0-9]+/g, "-").slice(0, 32);
  return `${namespacePrefix}${pid}-${serial}-${readable}`;
}

/** The pid in a harness name (namespace, alias, temp folder), or undefined for any other name. */
export function creatorPidOf(name: string): number | undefined {
  for (const prefix of [namespacePrefix, vethAliasPrefix, tempFolderPrefix]) {
    if (!name.startsWith(prefix)) continue;
    const match = /^(\d+)(?:-|$)/.exec(name.slice(prefix.length));
    if (match) return Number(match[1]);
  }
  return undefined;
}

/** Whether an IPv4 address (dotted) lies in a CIDR block. */
export function addressInBlock(address: string, cidr: string): boolean {
  const [block, lengthText] = cidr.split("/");
  const length = lengthText === undefined ? 32 : Number(lengthText);
  const mask = length === 0 ? 0 : (~0 << (32 - length)) >>> 0;
  return ((toNumber(address) & mask) >>> 0) === ((toNumber(block!) & mask) >>> 0);
}

/** Whether two CIDR blocks share any address. */
export function blocksOverlap(left: string, right: string): boolean {
  const [leftBase] = left.split("/");
  const [rightBase] = right.split("/");
  return addressInBlock(leftBase!, right) || addressInBlock(rightBase!, left);
}

function toNumber(address: string): number {
  const parts = address.split(".").map(Number);
  const valid = parts.length === 4 && parts.every((p) => Number.isInteger(p) && p >= 0 && p <= 255);
  assert(valid, address);
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}
