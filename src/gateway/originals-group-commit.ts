import { limits } from "../config/limits.ts";
import type { Pool } from "../db/pool.ts";
import { iso8583OriginalBatches, iso8583OriginalBatchMessages } from "../observability/metrics-gateway.ts";
import { withTransaction } from "../db/transaction.ts";
import { cardAccountsOf } from "../cards/cards.ts";
import { cardHashesOf, decideAlone, decideOriginals, type PendingOriginal } from "./decide-originals.ts";
import type { InboundResult } from "./inbound-types.ts";

interface Waiting extends PendingOriginal {
  done: (result: InboundResult) => void;
  failed: (error: unknown) => void;
}

export interface OriginalsGroupCommitBounds {
  batchMessagesMax: number;
  batchesInFlightMax: number;
  queueMax: number;
}

const defaultBounds: OriginalsGroupCommitBounds = {
  batchMessagesMax: limits.iso8583.inboundBatchMessagesMax,
  batchesInFlightMax: limits.iso8583.inboundBatchesInFlightMax,
  queueMax: limits.iso8583.inboundBatchQueueMax,
};

/**
 * The batching writer of ISO 8583 originals (docs/decisions/0045), as the payments' (0043). A
 * message starts a batch at once while fewer than `batchesInFlightMax` run (no fixed wait);
 * messages arriving meanwhile queue and go together in the next batch, up to `batchMessagesMax`,
 * one tenant and connection per batch. A batch never holds a natural key or an RRN (per message
 * class) that it or a batch in flight already holds: that message waits for a later batch, so the
 * core never sees in-batch twins, the RRN link always sees a committed first, and a batch never
 * waits on its own process's uncommitted rows. A batch that fails as a whole committed nothing:
 * each of its messages is decided again alone and gets that path's answer.
 */
export class OriginalsGroupCommit {
  private queue: Waiting[] = [];
  private inFlight = 0;
  private readonly held = new Set<string>();   // keys and RRNs of the batches in flight

  constructor(private readonly pool: Pool, private readonly bounds: OriginalsGroupCommitBounds = defaultBounds) {}

  /** Messages waiting for a batch (for tests that must know a batch will hold them together). */
  get queued(): number {
    return this.queue.length;
  }

  /** Batch transactions running now. */
  get batchesInFlight(): number {
    return this.inFlight;
  }

  submit(original: PendingOriginal): Promise<InboundResult> {
    if (this.queue.length >= this.bounds.queueMax) {
      // Past the bound a message is decided alone (exact, as before group commit) rather than wait for several batches.
      iso8583OriginalBatchMessages.inc({ path: "alone_queue_full" });
      return decideAlone(this.pool, original);
    }
    return new Promise<InboundResult>((done, failed) => {
      this.queue.push({ ...original, done, failed });
      this.schedulePump();
    });
  }

  private pumpScheduled = false;

  /**
   * A batch starts on the next turn of the event loop, not on the first message's own: the other
   * frames read in the same turn (a scheme writes its window in bursts) join it. No timer: a lone
   * message waits only for the frames already read.
   */
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.bounds.batchesInFlightMax && this.queue.length > 0) {
      const batch = this.take();
      if (batch.length === 0) return; // everything waiting names a key or RRN of a batch in flight
      this.inFlight++;
      const marks = batch.flatMap(marksOf);
      for (const mark of marks) this.held.add(mark);
      void this.run(batch).finally(() => {
        for (const mark of marks) this.held.delete(mark);
        this.inFlight--;
        this.schedulePump();
      });
    }
  }

  /** The next batch, in arrival order: the first free message's tenant and connection, each key and RRN once. */
  private take(): Waiting[] {
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    const marks = new Set<string>();
    for (const waiting of this.queue) {
      const first = batch[0]?.original;
      const { tenantId, connection } = waiting.original;
      const fits = batch.length < this.bounds.batchMessagesMax
        && (!first || (first.tenantId === tenantId && first.connection === connection))
        && marksOf(waiting).every((mark) => !marks.has(mark) && !this.held.has(mark));
      if (fits) {
        batch.push(waiting);
        for (const mark of marksOf(waiting)) marks.add(mark);
      } else {
        rest.push(waiting);
      }
    }
    this.queue = rest;
    return batch;
  }

  private async run(batch: Waiting[]): Promise<void> {
    let results: InboundResult[];
    try {
      // Not retried as a batch: after a deadlock, a lock or RRN race with another process, each message retries alone.
      // The cards' accounts are read on another connection while BEGIN and the locks run: one round trip off the chain.
      const cardAccounts = cardAccountsOf(this.pool, (batch[0] as Waiting).original.tenantId, cardHashesOf(batch));
      cardAccounts.catch(() => undefined);   // a failure surfaces where the batch awaits it
      results = await withTransaction(this.pool, (tx) => decideOriginals(tx, batch, cardAccounts), { retriesMax: 0 });
    } catch {
      // Nothing of the batch committed (its one transaction rolled back): each message is decided alone.
      iso8583OriginalBatches.inc({ outcome: "fallback" });
      iso8583OriginalBatchMessages.inc({ path: "alone_after_failed_batch" }, batch.length);
      await Promise.all(batch.map((w) => decideAlone(this.pool, w).then(w.done, w.failed)));
      return;
    }
    iso8583OriginalBatches.inc({ outcome: "committed" });
    iso8583OriginalBatchMessages.inc({ path: "batch" }, batch.length);
    batch.forEach((w, i) => w.done(results[i] as InboundResult));
  }
}

/** What two messages of one batch (or of two batches in flight) must not share: the natural key, the RRN in its message class. */
function marksOf(waiting: PendingOriginal): string[] {
  const { tenantId, identity, retrievalReferenceNumber } = waiting.original;
  const marks = [`key\u0000${tenantId}\u0000${waiting.naturalKey}`];
  if (retrievalReferenceNumber !== undefined) marks.push(`rrn\u0000${tenantId}\u0000${identity.mtiClass}\u0000${retrievalReferenceNumber}`);
  return marks;
}
