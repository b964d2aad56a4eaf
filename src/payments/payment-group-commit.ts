import { limits } from "../config/limits.ts";
import type { Pool } from "../db/pool.ts";
import { isCommitOutcomeUnknown } from "../db/failure-kind.ts";
import { GroupCommitQueue } from "../db/group-commit-queue.ts";
import { sentTogether } from "../db/pipeline.ts";
import { StatementParams } from "../db/statement-parts.ts";
import { commitAfter, withTransaction, type Tx } from "../db/transaction.ts";
import { claimBatch, completeBatchPart, findBatchRecords, type BatchCompletion } from "../idempotency/batch-claims.ts";
import { claimTransactionSettings, FENCED_OFF_CHECK, isFencedOff, type IdempotencyRecord, type IdempotencyScope } from "../idempotency/records.ts";
import { paymentBatches, paymentBatchRequests } from "../observability/metrics.ts";
import { faultPoint } from "../requests/fault-points.ts";
import { answerHeld, runFirstTimeAlone, type IdempotentCall, type IdempotentReply } from "../requests/idempotent-request.ts";
import type { Reply } from "../requests/reply.ts";
import { lockIntents } from "./intent-lock.ts";
import { decidePayments, paymentWritesPart, type DecidedPayments } from "./payment-batch.ts";
import type { PaymentOutcome, PaymentRequest } from "./payments.ts";

/** A first-time payment past the replay fast path, waiting for a batch. */
export interface FirstTimePayment {
  call: IdempotentCall;          // what runs alone if its batch fails or the queue is full
  scope: IdempotencyScope;
  digest: string;
  request: PaymentRequest;
  replyOf: (outcome: PaymentOutcome) => Reply;
}

interface Waiting extends FirstTimePayment {
  done: (reply: IdempotentReply) => void;
  failed: (error: unknown) => void;
}

export interface GroupCommitBounds {
  batchRequestsMax: number;
  batchesInFlightMax: number;
  queueMax: number;
}

const defaultBounds: GroupCommitBounds = {
  batchRequestsMax: limits.http.paymentBatchRequestsMax,
  batchesInFlightMax: limits.http.paymentBatchesInFlightMax,
  queueMax: limits.http.paymentBatchQueueMax,
};

/**
 * The batching writer of first-time payments (docs/decisions/0043), over the shared queue
 * (src/db/group-commit-queue.ts): one tenant and endpoint per batch, and a batch never holds an
 * idempotency key or a client_reference that it or a batch in flight already holds. A batch that
 * fails as a whole (lock timeout on a claim, deadlock, fenced-off attempt, any error) committed
 * nothing: each of its callers runs again alone on the single-request path and gets that path's
 * answer; after a batch whose COMMIT outcome is unknown, a caller that fails alone too is
 * answered unknown (0078).
 */
export class PaymentGroupCommit {
  private readonly batches: GroupCommitQueue<Waiting>;

  constructor(private readonly pool: Pool, bounds: GroupCommitBounds = defaultBounds) {
    this.batches = new GroupCommitQueue<Waiting>({
      bounds: { batchItemsMax: bounds.batchRequestsMax, batchesInFlightMax: bounds.batchesInFlightMax, queueMax: bounds.queueMax },
      marksOf,
      sameBatch: (first, waiting) => first.scope.tenantId === waiting.scope.tenantId && first.scope.endpoint === waiting.scope.endpoint,
      runBatch: (batch) => this.run(batch),
      startOnNextTurn: false,
    });
  }

  /** Callers waiting for a batch (for tests that must know a batch will hold them together). */
  get queued(): number {
    return this.batches.queued;
  }

  /** Batch transactions running now. */
  get batchesInFlight(): number {
    return this.batches.batchesInFlight;
  }

  submit(payment: FirstTimePayment): Promise<IdempotentReply> {
    return new Promise<IdempotentReply>((done, failed) => {
      if (this.batches.offer({ ...payment, done, failed })) return;
      // Past the bound a caller runs alone (exact, on today's path) rather than wait for several batches.
      paymentBatchRequests.inc({ path: "alone_queue_full" });
      runFirstTimeAlone(payment.call, payment.scope, payment.digest).then(done, failed);
    });
  }

  private async run(batch: Waiting[]): Promise<void> {
    let answers: BatchAnswer[];
    try {
      answers = await decideBatch(this.pool, batch);
    } catch (error) {
      if (isCommitOutcomeUnknown(error)) {
        // The batch may have committed. Each caller asks by running alone: its claim finds the
        // stored answer, or runs it once. If that fails too, the answer is unknown, never the
        // alone path's "nothing was stored" (docs/decisions/0078).
        paymentBatches.inc({ outcome: "unknown" });
        paymentBatchRequests.inc({ path: "alone_after_unknown_batch" }, batch.length);
        await Promise.all(batch.map((w) => runFirstTimeAlone(w.call, w.scope, w.digest)
          .then(w.done, () => w.failed(error))));
        return;
      }
      // Nothing of the batch committed (its one transaction rolled back): each caller runs alone.
      paymentBatches.inc({ outcome: "fallback" });
      paymentBatchRequests.inc({ path: "alone_after_failed_batch" }, batch.length);
      await Promise.all(batch.map((w) => runFirstTimeAlone(w.call, w.scope, w.digest).then(w.done, w.failed)));
      return;
    }
    paymentBatches.inc({ outcome: "committed" });
    paymentBatchRequests.inc({ path: "batch" }, batch.length);
    faultPoint("after_commit");
    await Promise.all(batch.map((w, i) => answerOf(w, answers[i] as BatchAnswer).then(w.done, w.failed)));
  }
}

/** What two callers of one batch (or of two batches in flight) must not share: the idempotency key, the client_reference. */
function marksOf(waiting: FirstTimePayment): string[] {
  const { tenantId, endpoint, key } = waiting.scope;
  return [`key\u0000${tenantId}\u0000${endpoint}\u0000${key}`, `ref\u0000${tenantId}\u0000${waiting.request.clientReference}`];
}

type BatchAnswer = { kind: "done"; reply: Reply } | { kind: "held"; record: IdempotencyRecord };

function answerOf(waiting: Waiting, answer: BatchAnswer): Promise<IdempotentReply> {
  if (answer.kind === "done") return Promise.resolve({ ...answer.reply, replayed: false });
  return answerHeld(waiting.call, waiting.scope, waiting.digest, answer.record);
}

class FencedOff extends Error {}

/**
 * One transaction for the batch, in five round trips on a pipelining pool (docs/decisions/0051):
 * BEGIN, the claim of every key and the intent locks go out together; the record core's
 * statements in three (record keys; the locks with the balances behind them; transfers and
 * entries); then the payment rows, their events and the idempotency completions as ONE
 * statement, with COMMIT behind it. A fenced-off attempt makes that statement raise, so the COMMIT
 * rolls back. No retry here: a batch that fails is not run again as a batch, its callers run
 * alone (and retry alone).
 */
function decideBatch(pool: Pool, batch: readonly Waiting[]): Promise<BatchAnswer[]> {
  const { tenantId, endpoint } = (batch[0] as Waiting).scope;
  return withTransaction(pool, async (tx) => {
    // The intent locks go out behind the claim, not after its answer: a key found held only has its intent locked for nothing.
    const [attempts, transactionAt] = await sentTogether(tx,
      () => claimBatch(tx, tenantId, endpoint, batch.map((w) => ({ key: w.scope.key, digest: w.digest, canonical: w.call.canonical }))),
      () => lockIntents(tx, tenantId, batch.map((w) => w.request.clientReference)));
    faultPoint("after_claim");
    const claimed = batch.filter((w) => attempts.has(w.scope.key));
    const records = await findBatchRecords(tx, tenantId, endpoint, batch.filter((w) => !attempts.has(w.scope.key)).map((w) => w.scope.key));
    if (claimed.length === 0) return batch.map((w) => heldAnswer(w, records, endpoint));
    const decided = await decidePayments(tx, tenantId, endpoint, claimed.map((w) => ({ request: w.request, idempotencyKey: w.scope.key })), transactionAt);
    faultPoint("after_posting");
    const replies = new Map(claimed.map((w, i) => [w, w.replyOf(decided.outcomes[i] as PaymentOutcome)]));
    const completions = claimed.map((w) => {
      const reply = replies.get(w) as Reply;
      return { key: w.scope.key, attempt: attempts.get(w.scope.key) as number, response: { status: reply.status, body: reply.body, effectRef: reply.effectRef } };
    });
    await writeAndCommit(tx, tenantId, endpoint, decided, completions);
    return batch.map((w): BatchAnswer => {
      const reply = replies.get(w);
      return reply ? { kind: "done", reply } : heldAnswer(w, records, endpoint);
    });
  }, { localSettings: claimTransactionSettings, retriesMax: 0 });
}

function heldAnswer(waiting: Waiting, records: Map<string, IdempotencyRecord>, endpoint: string): BatchAnswer {
  const record = records.get(waiting.scope.key);
  if (!record) throw new Error(`idempotency record ${endpoint} ${waiting.scope.key} vanished during its claim`);
  return { kind: "held", record };
}

/** The payment rows, their events and the completions in one statement, sent with COMMIT. */
async function writeAndCommit(tx: Tx, tenantId: string, endpoint: string, decided: DecidedPayments, completions: readonly BatchCompletion[]): Promise<void> {
  const params = new StatementParams();
  const writes = paymentWritesPart(params, tenantId, decided);
  const done = completeBatchPart(params, tenantId, endpoint, completions);
  const text = `WITH ${writes}, done AS (${done})
                SELECT expect_row_count((SELECT count(*) FROM done), ${params.add(completions.length, "bigint")}, ${params.add(FENCED_OFF_CHECK)}) AS completed`;
  try {
    await commitAfter(tx, () => tx.query({ name: "clearline.payments.write-complete-batch", text }, params.values));
  } catch (error) {
    if (isFencedOff(error)) throw new FencedOff();
    throw error;
  }
}

const writers = new WeakMap<Pool, PaymentGroupCommit>();

/** The process's batching writer for this pool (one per pool, like the audit GroupWriter). */
export function paymentGroupCommitOf(pool: Pool): PaymentGroupCommit {
  let writer = writers.get(pool);
  if (!writer) {
    writer = new PaymentGroupCommit(pool);
    writers.set(pool, writer);
  }
  return writer;
}
