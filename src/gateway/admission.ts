import { BlockList, isIPv4, isIPv6 } from "node:net";
import { parseCidr } from "../config/iso8583-admission.ts";

/**
 * Who may hold a connection to the scheme endpoint, and how many: an allow-list of peer
 * networks (CIDR), a per-peer bound below the total so that one peer (a flood of idle or
 * half-sent connections) can never take every slot, and the total. Pure bookkeeping: the
 * endpoint asks `admit` on each accepted socket and calls `release` when it closes.
 */
export type RefusalReason = "peer_not_allowed" | "peer_connections_max" | "connections_max";

export interface AdmissionPolicy {
  allowedPeers: readonly string[];     // CIDRs: "10.1.2.0/24", "127.0.0.1/32", "::1/128"
  connectionsMax: number;
  connectionsPerPeerMax: number;
}

/** An IPv4 peer on a dual-stack socket reads "::ffff:10.1.2.3": matched as the IPv4 it is. */
export function normalizePeerAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address;
}

export class Admission {
  private readonly allowed = new BlockList();
  private readonly perPeer = new Map<string, number>();
  private total = 0;

  constructor(private readonly policy: AdmissionPolicy) {
    for (const text of policy.allowedPeers) {
      const cidr = parseCidr(text);
      if (cidr === undefined) throw new Error(`allowed peer ${JSON.stringify(text)} is not a CIDR (validated by loadConfig)`);
      this.allowed.addSubnet(cidr.address, cidr.prefix, cidr.family);
    }
  }

  isAllowed(address: string): boolean {
    const peer = normalizePeerAddress(address);
    if (isIPv4(peer)) return this.allowed.check(peer, "ipv4");
    return isIPv6(peer) && this.allowed.check(peer, "ipv6");
  }

  /** A slot for this peer, or the reason there is none. The per-peer bound is checked first: it names the culprit. */
  admit(address: string): { ok: true; release: () => void } | { ok: false; reason: RefusalReason } {
    const peer = normalizePeerAddress(address);
    if (!this.isAllowed(peer)) return { ok: false, reason: "peer_not_allowed" };
    const held = this.perPeer.get(peer) ?? 0;
    if (held >= this.policy.connectionsPerPeerMax) return { ok: false, reason: "peer_connections_max" };
    if (this.total >= this.policy.connectionsMax) return { ok: false, reason: "connections_max" };
    this.perPeer.set(peer, held + 1);
    this.total++;
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        const left = (this.perPeer.get(peer) ?? 1) - 1;
        if (left === 0) this.perPeer.delete(peer);
        else this.perPeer.set(peer, left);
      },
    };
  }
}
