import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { performance } from "node:perf_hooks";
import { assert } from "../assert.ts";
import type { Pool } from "../db/pool.ts";
import type { Tx } from "../db/transaction.ts";
import type { Logger } from "../observability/logger.ts";
import {
  repeatedFailureLog, type RepeatedFailureLog,
} from "../observability/repeated-failure-log.ts";
import { fleetLeaseChanges, fleetLeaseHeld } from "../observability/metrics-fleet.ts";
import {
  acquireLease, leaseStillHeld, releaseLease, renewLease, type Grant,
} from "./lease-store.ts";

/** What one process does while it holds a lease: a file source, a job, the scheme link. */
export interface LeasedWork {
  /** Starts the work for `grant`; what it writes for the lease it fences with fenceOf(grant). */
  start(grant: Grant): Promise<void>;
  /** Stops it; resolves once nothing of it runs any more. */
  stop(): Promise<void>;
}

/** A write for a lease its process no longer holds: rolled back, and the work stops. */
export class LeaseLost extends Error {
  readonly code = "FLEET_LEASE_LOST";
  constructor(readonly leaseName: string) {
    super(`the lease ${leaseName} is no longer this process's: another process was granted it, `
      + "or it ran out");
    this.name = "LeaseLost";
  }
}

/** The takeover bound of a lease of `leaseMs` (Fleet.takeoverBoundMs): it and two renewals. */
export function takeoverBoundMs(leaseMs: number): number {
  return leaseMs + 2 * Math.floor(leaseMs / 3);
}

/** Who a process is in fleet_lease: host, pid and a nonce (a restarted process is a new holder). */
export function processHolderId(): string {
  return `${hostname()}/${process.pid}/${randomBytes(3).toString("hex")}`;
}

/**
 * The check a fenced write runs as the last statement of its transaction (decision 0072): throws
 * LeaseLost, rolling the transaction back, when `grant` no longer holds its lease.
 */
export function fenceOf(grant: Grant): (tx: Tx) => Promise<void> {
  return async (tx) => {
    if (!(await leaseStillHeld(tx, grant))) throw new LeaseLost(grant.leaseName);
  };
}

export interface FleetOptions {
  holder: string;
  holderAddress?: string;
  leaseMs: number;
  logger: Logger;
}

interface Held {
  grant: Grant;
  deadline: NodeJS.Timeout;    // gives the lease up unless a renewal moves it on first
}

interface Contended {
  name: string;
  work: LeasedWork;
  held: Held | undefined;
  // The last ask was refused: another process held a running lease then. False after an ask
  // that failed (the database did not answer), before the first ask, and while this one holds it.
  heldElsewhere: boolean;
  transition: Promise<void>;   // starts and stops of the work, one after the other
}

/**
 * This process's leases (docs/decisions/0072). Every renewal period (a third of the lease) it
 * renews each lease it holds and asks for each one it does not. A grant starts the lease's work;
 * a lost lease stops it. The process gives a lease up on its own clock before the database's lease
 * can run out: when no renewal sent in the last (lease - one period) succeeded (two in a row
 * failed or hang), it stops the work while the lease still covers it, as Patroni demotes a
 * primary that cannot update its leader key. Renewals run on a pool of their own, so they never
 * queue behind the work.
 */
export class Fleet {
  readonly renewEveryMs: number;
  private readonly leases = new Map<string, Contended>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;
  // Renewals and asks that fail (the database gone) are logged once per interval (0082).
  private readonly statementFailures: RepeatedFailureLog;

  constructor(private readonly pool: Pool, readonly options: FleetOptions) {
    assert(options.leaseMs >= 3, "a lease is long enough to be renewed three times");
    this.renewEveryMs = Math.floor(options.leaseMs / 3);
    this.statementFailures = repeatedFailureLog(options.logger, "lease statement failed");
  }

  get holder(): string {
    return this.options.holder;
  }

  /** Where this process answers HTTP (known once it listens), shown beside its leases. */
  setHolderAddress(address: string): void {
    this.options.holderAddress = address;
  }

  /**
   * A dead holder's work moves within this of its last renewal: its lease runs out, the others'
   * next ask comes within one renewal period, and lands within another.
   */
  get takeoverBoundMs(): number {
    return takeoverBoundMs(this.options.leaseMs);
  }

  /** Contends for `name`; `work` runs whenever this process holds it. */
  hold(name: string, work: LeasedWork): void {
    assert(!this.leases.has(name), `lease ${name} is held for one work only`);
    this.leases.set(name, {
      name, work, held: undefined, heldElsewhere: false, transition: Promise.resolve(),
    });
    fleetLeaseHeld.set({ lease: name }, 0);
    if (this.timer !== undefined) this.tick();
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), this.renewEveryMs);
    this.timer.unref();
    this.tick();
  }

  /** The names of the leases this process holds now. */
  heldLeases(): string[] {
    return [...this.leases.values()]
      .filter((lease) => lease.held !== undefined)
      .map((lease) => lease.name);
  }

  isHeld(name: string): boolean {
    return this.leases.get(name)?.held !== undefined;
  }

  /**
   * Whether this process's last ask for `name` found another process holding it. When neither
   * this nor isHeld is true, nobody is known to run the lease's work (the database was away, or
   * the lease was just lost and is not asked for again yet): the work is down for the fleet.
   */
  isHeldElsewhere(name: string): boolean {
    return this.leases.get(name)?.heldElsewhere === true;
  }

  /**
   * The moment this process gives a lease up unless a renewal lands first: (lease - one period)
   * after the renewal (or grant) that succeeded was sent. The database's lease runs at least
   * `lease` from that send, so the work stops a period before anyone else can be granted it.
   */
  private deadlineAfter(lease: Contended, sentMs: number): NodeJS.Timeout {
    const inMs = Math.max(0, sentMs + this.options.leaseMs - this.renewEveryMs - performance.now());
    const timer = setTimeout(() => this.lose(lease, "not renewed in time"), inMs);
    timer.unref();
    return timer;
  }

  private tick(): void {
    if (this.stopped) return;
    // A round whose statements hang is not doubled; each held lease's deadline runs on its own.
    if (this.ticking !== undefined) return;
    this.ticking = this.round().finally(() => {
      this.ticking = undefined;
    });
  }

  private async round(): Promise<void> {
    let failed = false;
    for (const lease of this.leases.values()) {
      if (this.stopped) return;
      try {
        if (lease.held !== undefined) await this.renew(lease, lease.held);
        else await this.acquire(lease);
      } catch (error) {
        lease.heldElsewhere = false;
        // The database did not answer: a held lease's deadline decides, an ask is repeated.
        failed = true;
        this.statementFailures.failed(error, { lease: lease.name });
      }
    }
    if (!failed) this.statementFailures.succeeded();
  }

  private async renew(lease: Contended, held: Held): Promise<void> {
    const sentMs = performance.now();
    const renewed = await renewLease(this.pool, held.grant, this.options.leaseMs);
    if (lease.held !== held) return;
    if (!renewed) return this.lose(lease, "taken over by another process");
    clearTimeout(held.deadline);
    held.deadline = this.deadlineAfter(lease, sentMs);
  }

  private async acquire(lease: Contended): Promise<void> {
    const sentMs = performance.now();
    const { holder, holderAddress, leaseMs } = this.options;
    const grant = await acquireLease(this.pool, {
      leaseName: lease.name, holder, leaseMs,
      ...(holderAddress === undefined ? {} : { holderAddress }),
    });
    lease.heldElsewhere = grant === undefined;
    if (grant === undefined) return;
    if (this.stopped) {
      await releaseLease(this.pool, grant);
      return;
    }
    const held: Held = { grant, deadline: this.deadlineAfter(lease, sentMs) };
    lease.held = held;
    fleetLeaseHeld.set({ lease: lease.name }, 1);
    fleetLeaseChanges.inc({ lease: lease.name, change: "acquired" });
    const token = grant.token.toString();
    this.options.logger.info({ lease: lease.name, token }, "lease acquired");
    lease.transition = lease.transition.then(() => this.startWork(lease, held));
  }

  private async startWork(lease: Contended, held: Held): Promise<void> {
    if (lease.held !== held) return;   // lost before its work started
    try {
      await lease.work.start(held.grant);
    } catch (error) {
      this.options.logger.warn({ err: error, lease: lease.name },
        "the lease's work did not start; the lease is let go");
      if (lease.held !== held) return;
      lease.held = undefined;
      clearTimeout(held.deadline);
      fleetLeaseHeld.set({ lease: lease.name }, 0);
      await lease.work.stop().catch(() => undefined);
      await releaseLease(this.pool, held.grant).catch(() => undefined);
    }
  }

  private lose(lease: Contended, why: string): void {
    if (lease.held === undefined) return;
    const { grant, deadline } = lease.held;
    clearTimeout(deadline);
    lease.held = undefined;
    fleetLeaseHeld.set({ lease: lease.name }, 0);
    fleetLeaseChanges.inc({ lease: lease.name, change: "lost" });
    const token = grant.token.toString();
    this.options.logger.warn({ lease: lease.name, token, code: "FLEET_LEASE_LOST" },
      `lease lost: ${why}; its work stops`);
    lease.transition = lease.transition.then(() => lease.work.stop()).catch((error: unknown) => {
      this.options.logger.warn({ err: error, lease: lease.name },
        "stopping the work of a lost lease failed");
    });
  }

  /** Stops every work, then lets each lease go, so the other processes take them at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.ticking;
    this.statementFailures.close();
    await Promise.all([...this.leases.values()].map(async (lease) => {
      const held = lease.held;
      lease.held = undefined;
      if (held !== undefined) clearTimeout(held.deadline);
      await lease.transition;
      if (held === undefined) return;
      await lease.work.stop();
      fleetLeaseHeld.set({ lease: lease.name }, 0);
      fleetLeaseChanges.inc({ lease: lease.name, change: "released" });
      await releaseLease(this.pool, held.grant).catch((error: unknown) => {
        this.options.logger.warn({ err: error, lease: lease.name },
          "releasing a lease failed; it runs out on its own");
      });
    }));
  }
}
