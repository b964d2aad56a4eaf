/** The named bounds of one batching writer (each writer's come from src/config/limits/). */
export interface GroupCommitQueueBounds {
  batchItemsMax: number;      // the most items in one transaction
  batchesInFlightMax: number; // batch transactions open at once in this process
  queueMax: number;           // items waiting for a batch; past it `offer` refuses and the caller runs alone
}

/** What a batching writer tells the queue about its items. */
export interface GroupCommitPolicy<W> {
  bounds: GroupCommitQueueBounds;
  /** What two items of one batch, or of two batches in flight, must not share (a natural key, an idempotency key, an RRN). */
  marksOf(item: W): readonly string[];
  /** Whether `item` may join a batch that `first` began (the same tenant, and endpoint or connection). */
  sameBatch(first: W, item: W): boolean;
  /** Decides one batch in one transaction and settles every item of it; never rejects. */
  runBatch(batch: W[]): Promise<void>;
  /**
   * Start a batch on the next turn of the event loop rather than at once, so the other items
   * read in the same turn (a scheme writes its window in bursts) join it. Never a timer.
   */
  startOnNextTurn: boolean;
}

/**
 * The queue of a group-commit writer (docs/decisions/0043, 0045): a batch starts as soon as fewer
 * than `batchesInFlightMax` run, so a lone item never waits on a timer; items arriving meanwhile
 * queue and go together in the next batch, up to `batchItemsMax`, in arrival order. A batch never
 * takes an item whose marks it or a batch in flight already holds: that item waits for a later
 * batch, so the record core never sees in-batch twins and a batch never waits on its own
 * process's uncommitted rows. The writers keep what differs: how a batch is decided, how an item
 * runs alone, their metrics.
 */
export class GroupCommitQueue<W> {
  private queue: W[] = [];
  private inFlight = 0;
  private readonly held = new Set<string>();   // marks of the batches in flight
  private pumpScheduled = false;

  constructor(private readonly policy: GroupCommitPolicy<W>) {}

  /** Items waiting for a batch (for tests that must know a batch will hold them together). */
  get queued(): number {
    return this.queue.length;
  }

  /** Batch transactions running now. */
  get batchesInFlight(): number {
    return this.inFlight;
  }

  /** Queues the item for a batch; false when the queue is at its bound (the caller then runs alone). */
  offer(item: W): boolean {
    if (this.queue.length >= this.policy.bounds.queueMax) return false;
    this.queue.push(item);
    this.schedulePump();
    return true;
  }

  private schedulePump(): void {
    if (!this.policy.startOnNextTurn) return this.pump();
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.policy.bounds.batchesInFlightMax && this.queue.length > 0) {
      const batch = this.take();
      if (batch.length === 0) return; // everything waiting holds a mark of a batch in flight
      this.inFlight++;
      const marks = batch.flatMap((item) => this.policy.marksOf(item));
      for (const mark of marks) this.held.add(mark);
      void this.policy.runBatch(batch).finally(() => {
        for (const mark of marks) this.held.delete(mark);
        this.inFlight--;
        this.schedulePump();
      });
    }
  }

  /** The next batch, in arrival order: the first free item's group, each mark once. */
  private take(): W[] {
    const batch: W[] = [];
    const rest: W[] = [];
    const marks = new Set<string>();
    for (const item of this.queue) {
      const first = batch[0];
      const itemMarks = this.policy.marksOf(item);
      const fits = batch.length < this.policy.bounds.batchItemsMax
        && (first === undefined || this.policy.sameBatch(first, item))
        && itemMarks.every((mark) => !marks.has(mark) && !this.held.has(mark));
      if (fits) {
        batch.push(item);
        for (const mark of itemMarks) marks.add(mark);
      } else {
        rest.push(item);
      }
    }
    this.queue = rest;
    return batch;
  }
}
