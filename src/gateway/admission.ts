import { BlockList, isIPv4, isIPv6 } from "node:net";
import { parseCidr } from "../config/iso8583-admission.ts";

/**
 * Who may hold a connection to the scheme endpoint, and how many (docs/decisions/0022, 0064): an
 * allow-list of peer networks (CIDR), a per-peer bound below the total so that one peer can never
 * take every slot, and the total. A connection that has not signed on yet is one of at most
 * `unsignedConnectionsMax` (a budget below the total): when that budget or the total is full, a
 * new connection evicts the oldest connection that has not signed on, or when every one has, the
 * connection idle the longest.
 * So no set of peers holding sockets that never sign on can keep a scheme link out. Pure
 * bookkeeping: the endpoint asks `admit` on each accepted socket, tells the connection when it
 * signs on or hears a message, and releases it when it closes.
 */
export type RefusalReason = "peer_not_allowed" | "peer_connections_max";
export type EvictionReason = "evicted_unsigned" | "evicted_idle";

export interface AdmissionPolicy {
  allowedPeers: readonly string[];     // CIDRs: "10.1.2.0/24", "127.0.0.1/32", "::1/128"
  connectionsMax: number;
  connectionsPerPeerMax: number;
  unsignedConnectionsMax: number;
}

/** An admitted connection, as the endpoint reports on it. */
export interface AdmittedConnection {
  /** Signed on (true) or signed off (false): in or out of the budget of unsigned connections. */
  signedOn(value: boolean): void;
  /** A message arrived: the connection is the last to be evicted as idle. */
  active(): void;
  /** The socket closed (or was evicted); idempotent. */
  release(): void;
}

interface Held {
  peer: string;
  signedOn: boolean;
  lastActive: number;    // a sequence number: higher is more recent
  evict: (reason: EvictionReason) => void;
  released: boolean;
}

/** An IPv4 peer on a dual-stack socket reads "::ffff:10.1.2.3": matched as the IPv4 it is. */
export function normalizePeerAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address;
}

export class Admission {
  private readonly allowed = new BlockList();
  private readonly perPeer = new Map<string, number>();
  private readonly held = new Set<Held>();
  private unsigned = 0;
  private sequence = 0;

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

  /**
   * A slot for this peer, or the reason there is none. The per-peer bound is checked first: it
   * names the culprit. Past the unsigned budget or the total, an older connection is evicted
   * (its `evict` is called and its slot freed at once) and this one admitted.
   */
  admit(address: string, evict: (reason: EvictionReason) => void): { ok: true; connection: AdmittedConnection } | { ok: false; reason: RefusalReason } {
    const peer = normalizePeerAddress(address);
    if (!this.isAllowed(peer)) return { ok: false, reason: "peer_not_allowed" };
    const count = this.perPeer.get(peer) ?? 0;
    if (count >= this.policy.connectionsPerPeerMax) return { ok: false, reason: "peer_connections_max" };
    // A connection that never signed on goes first: a signed-on link that echoes every 30-60 s
    // may have been quiet longer than a socket that connected a second ago and said nothing.
    const full = this.unsigned >= this.policy.unsignedConnectionsMax || this.held.size >= this.policy.connectionsMax;
    if (full && this.unsigned > 0) this.evictLeastActive("evicted_unsigned", (held) => !held.signedOn);
    else if (full) this.evictLeastActive("evicted_idle", () => true);
    const entry: Held = { peer, signedOn: false, lastActive: ++this.sequence, evict, released: false };
    this.held.add(entry);
    this.perPeer.set(peer, (this.perPeer.get(peer) ?? 0) + 1);
    this.unsigned++;
    return {
      ok: true,
      connection: {
        signedOn: (value) => {
          if (entry.released || entry.signedOn === value) return;
          entry.signedOn = value;
          this.unsigned += value ? -1 : 1;
        },
        active: () => { entry.lastActive = ++this.sequence; },
        release: () => this.release(entry),
      },
    };
  }

  /** Held connections and how many of them have not signed on: for the endpoint's gauge and tests. */
  counts(): { held: number; unsigned: number } {
    return { held: this.held.size, unsigned: this.unsigned };
  }

  /** Evicts the connection with no message for the longest time among those `eligible`. */
  private evictLeastActive(reason: EvictionReason, eligible: (held: Held) => boolean): void {
    let victim: Held | undefined;
    for (const held of this.held) if (eligible(held) && (victim === undefined || held.lastActive < victim.lastActive)) victim = held;
    if (victim === undefined) return;
    this.release(victim);
    victim.evict(reason);
  }

  private release(entry: Held): void {
    if (entry.released) return;
    entry.released = true;
    this.held.delete(entry);
    if (!entry.signedOn) this.unsigned--;
    const left = (this.perPeer.get(entry.peer) ?? 1) - 1;
    if (left === 0) this.perPeer.delete(entry.peer);
    else this.perPeer.set(entry.peer, left);
  }
}
