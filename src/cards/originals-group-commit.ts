import { limits } from "../config/limits.ts";
import { isCommitOutcomeUnknown } from "../db/failure-kind.ts";
import { GroupCommitQueue } from "../db/group-commit-queue.ts";
import type { Pool } from "../db/pool.ts";
import { iso8583OriginalBatches, iso8583OriginalBatchMessages } from "../observability/metrics-gateway.ts";
import { withTransaction } from "../db/transaction.ts";
import { cardAccountsOf } from "./cards.ts";
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
 * The batching writer of ISO 8583 originals (docs/decisions/0045), as the payments' (0043), over
 * the shared queue (src/db/group-commit-queue.ts): one tenant and connection per batch, and a
 * batch never holds a natural key or an RRN (per message class) that it or a batch in flight
 * already holds, so the RRN link always sees a committed first. A batch starts on the next turn
 * of the event loop: the other frames read in the same turn join it. A batch that fails as a
 * whole committed nothing: each of its messages is decided again alone and gets that path's answer.
 */
export class OriginalsGroupCommit {
  private readonly batches: GroupCommitQueue<Waiting>;

  constructor(private readonly pool: Pool, bounds: OriginalsGroupCommitBounds = defaultBounds) {
    this.batches = new GroupCommitQueue<Waiting>({
      bounds: { batchItemsMax: bounds.batchMessagesMax, batchesInFlightMax: bounds.batchesInFlightMax, queueMax: bounds.queueMax },
      marksOf,
      sameBatch: (first, waiting) => first.original.tenantId === waiting.original.tenantId && first.original.connection === waiting.original.connection,
      runBatch: (batch) => this.run(batch),
      startOnNextTurn: true,
    });
  }

  /** Messages waiting for a batch (for tests that must know a batch will hold them together). */
  get queued(): number {
    return this.batches.queued;
  }

  /** Batch transactions running now. */
  get batchesInFlight(): number {
    return this.batches.batchesInFlight;
  }

  submit(original: PendingOriginal): Promise<InboundResult> {
    return new Promise<InboundResult>((done, failed) => {
      if (this.batches.offer({ ...original, done, failed })) return;
      // Past the bound a message is decided alone (exact, as before group commit) rather than wait for several batches.
      iso8583OriginalBatchMessages.inc({ path: "alone_queue_full" });
      decideAlone(this.pool, original).then(done, failed);
    });
  }

  private async run(batch: Waiting[]): Promise<void> {
    let results: InboundResult[];
    try {
      // Not retried as a batch: after a deadlock, a lock or RRN race with another process, each message retries alone.
      // The cards' accounts are read on another connection while BEGIN and the locks run: one round trip off the chain.
      const cardAccounts = cardAccountsOf(this.pool, (batch[0] as Waiting).original.tenantId, cardHashesOf(batch));
      cardAccounts.catch(() => undefined);   // a failure surfaces where the batch awaits it
      results = await withTransaction(this.pool, (tx) => decideOriginals(tx, batch, cardAccounts), { retriesMax: 0 });
    } catch (error) {
      if (isCommitOutcomeUnknown(error)) {
        // The batch may have committed. Each message asks by being decided alone: one stored is
        // found by its natural key and answered as stored. If that fails too, it fails unknown
        // (answered 96), and the scheme's repeat finds out (docs/decisions/0078).
        iso8583OriginalBatches.inc({ outcome: "unknown" });
        await Promise.all(batch.map((w) =>
          decideAlone(this.pool, w).then(w.done, () => w.failed(error))));
        return;
      }
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
