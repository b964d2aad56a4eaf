import { limits } from "../config/limits.ts";
import type { Pool } from "../db/pool.ts";
import { GroupCommitQueue, type GroupCommitQueueBounds } from "../db/group-commit-queue.ts";
import { repeatScreenBatches } from "../observability/metrics.ts";
import { findRecordAuditingRepeat, findRecordsAuditingRepeats, type IdempotencyRecord, type IdempotencyScope } from "./records.ts";

interface Waiting {
  scope: IdempotencyScope;
  digest: string;
  done: (record: IdempotencyRecord | undefined) => void;
  failed: (error: unknown) => void;
}

const defaultBounds: GroupCommitQueueBounds = {
  batchItemsMax: limits.http.repeatScreenBatchLookupsMax,
  batchesInFlightMax: limits.http.repeatScreenBatchesInFlightMax,
  queueMax: limits.http.repeatScreenQueueMax,
};

/**
 * The replay fast path of every idempotent request, batched (docs/decisions/0054): the lookups of
 * the requests of one tenant and endpoint that arrive while a lookup statement is in flight go
 * out together in the next one, each still answered with its own record and its own audit row
 * written by that statement before it is answered. A lone request is looked up at once (no
 * timer). The statement only reads records and appends audit rows, so lookups need no marks: two
 * of one key in a batch read the same row, each audited. A failed statement fails each of its
 * requests, as the single lookup did.
 */
export class RepeatScreen {
  private readonly batches: GroupCommitQueue<Waiting>;

  constructor(private readonly pool: Pool, bounds: GroupCommitQueueBounds = defaultBounds) {
    this.batches = new GroupCommitQueue<Waiting>({
      bounds,
      marksOf: () => [],
      sameBatch: (first, waiting) => first.scope.tenantId === waiting.scope.tenantId && first.scope.endpoint === waiting.scope.endpoint,
      runBatch: (batch) => this.run(batch),
      startOnNextTurn: false,
    });
  }

  /** The record under the request's key, with the audit row of the answer it gives (see findRecordsAuditingRepeats). */
  find(scope: IdempotencyScope, digest: string): Promise<IdempotencyRecord | undefined> {
    return new Promise<IdempotencyRecord | undefined>((done, failed) => {
      if (this.batches.offer({ scope, digest, done, failed })) return;
      // Past the bound a request is looked up alone rather than wait behind several batches.
      repeatScreenBatches.inc({ path: "alone_queue_full" });
      findRecordAuditingRepeat(this.pool, scope, digest).then(done, failed);
    });
  }

  private async run(batch: Waiting[]): Promise<void> {
    const { tenantId, endpoint } = (batch[0] as Waiting).scope;
    repeatScreenBatches.inc({ path: "batch" });
    try {
      const records = await findRecordsAuditingRepeats(this.pool, tenantId, endpoint, batch.map((w) => ({ key: w.scope.key, digest: w.digest })));
      batch.forEach((w, i) => w.done(records[i]));
    } catch (error) {
      for (const w of batch) w.failed(error);
    }
  }
}

const screens = new WeakMap<Pool, RepeatScreen>();

/** The process's repeat screen for this pool (one per pool, like the payments' batching writer). */
export function repeatScreenOf(pool: Pool): RepeatScreen {
  let screen = screens.get(pool);
  if (!screen) {
    screen = new RepeatScreen(pool);
    screens.set(pool, screen);
  }
  return screen;
}
