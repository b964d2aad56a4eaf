import type { Pool, Queryable } from "../db/pool.ts";
import { limits } from "../config/limits.ts";
import type { Channel } from "../normalize/canonical-record.ts";
import { dedupDecisions } from "../observability/metrics.ts";


/** One dedup decision: every repeat that was not applied leaves one of these. */
export interface DedupEvent {
  tenantId: string;
  channel: Channel;
  scope: string;          // endpoint, file id or connection
  dedupKey: string;       // the idempotency key or natural key that matched
  reason: string;         // replayed, key_reuse, in_progress, duplicate_client_reference, duplicate, conflict, ...
  originalRef?: string;   // the original effect: payment id, transfer key, file and position
  position?: string;      // where the repeat came from
}

function eventColumns(events: DedupEvent[]): Array<Array<string | null>> {
  return [
    events.map((e) => e.tenantId), events.map((e) => e.channel), events.map((e) => e.scope), events.map((e) => e.dedupKey),
    events.map((e) => e.reason), events.map((e) => e.originalRef ?? null), events.map((e) => e.position ?? null),
  ];
}

const INSERT_SQL = `INSERT INTO dedup_event (tenant_id, channel, scope, dedup_key, reason, original_ref, position)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])`;

/** Records dedup decisions inside the caller's transaction: they commit with its outcome. */
export async function recordDedupEvents(db: Queryable, events: DedupEvent[]): Promise<void> {
  if (events.length === 0) return;
  await db.query(INSERT_SQL, eventColumns(events));
  countDedupDecisions(events);
}

/**
 * Counts dedup decisions by channel and reason: those written here, and a file's repeats, whose
 * record is their outcome row (docs/decisions/0053). One increment per label pair, not per repeat.
 */
export function countDedupDecisions(
  dedups: ReadonlyArray<{ channel: Channel; reason: string }>,
): void {
  const counts = new Map<string, { channel: Channel; reason: string; n: number }>();
  for (const d of dedups) {
    const label = `${d.channel}\u0000${d.reason}`;
    const count = counts.get(label);
    if (count) count.n++;
    else counts.set(label, { channel: d.channel, reason: d.reason, n: 1 });
  }
  for (const c of counts.values()) countDedupDecisionsOf(c.channel, c.reason, c.n);
}

/** Counts `n` dedup decisions of one channel and reason (a range of a file answered at once). */
export function countDedupDecisionsOf(channel: Channel, reason: string, n: number): void {
  if (n > 0) dedupDecisions.inc({ channel, reason }, n);
}

/**
 * Records dedup decisions that stand alone (a replayed HTTP response), committed with
 * synchronous_commit off (set_config local to the statement's own transaction): such an audit
 * row may be lost in the last moments before a database crash (never a posting, never a dedup
 * mark), in exchange for not waiting on a WAL flush for every repeat
 * (docs/decisions/0005-cheap-audit-writes.md).
 *
 * Concurrent callers are group-committed: while one insert is in flight, the events of the
 * callers that arrive meanwhile queue up and go out together in the next single insert. Every
 * caller still waits until its own rows are written, so nothing is answered before its audit row
 * exists; a retry storm costs one insert per round trip instead of one per request.
 */
export function recordDedupEventsCheaply(pool: Pool, events: DedupEvent[]): Promise<void> {
  if (events.length === 0) return Promise.resolve();
  let writer = groupWriters.get(pool);
  if (!writer) {
    writer = new GroupWriter(pool);
    groupWriters.set(pool, writer);
  }
  return writer.write(events);
}

const groupWriters = new WeakMap<Pool, GroupWriter>();

class GroupWriter {
  private queue: Array<{ events: DedupEvent[]; done: () => void; failed: (error: unknown) => void }> = [];
  private queuedEvents = 0;
  private flushing = false;
  constructor(private readonly pool: Pool) {}

  write(events: DedupEvent[]): Promise<void> {
    // Bounded: past the bound a caller writes alone rather than growing the queue.
    if (this.queuedEvents + events.length > limits.http.auditBatchEventsMax) return insertRelaxed(this.pool, events);
    return new Promise<void>((done, failed) => {
      this.queue.push({ events, done, failed });
      this.queuedEvents += events.length;
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      this.queuedEvents = 0;
      try {
        await insertRelaxed(this.pool, batch.flatMap((b) => b.events));
        for (const b of batch) b.done();
      } catch (error) {
        for (const b of batch) b.failed(error);
      }
    }
    this.flushing = false;
  }
}

async function insertRelaxed(pool: Pool, events: DedupEvent[]): Promise<void> {
  await pool.query(
    `WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true))
     INSERT INTO dedup_event (tenant_id, channel, scope, dedup_key, reason, original_ref, position)
     SELECT e.* FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) AS e, relaxed`,
    eventColumns(events),
  );
  countDedupDecisions(events);
}

export interface DedupEventRow { dedup_key: string; channel: string; scope: string; reason: string; original_ref: string | null; position: string | null; at: string }

/** The dedup records of these keys that came by request or message (an HTTP repeat, a card retransmission), oldest first. */
export async function requestDedupEventsOf(db: Queryable, tenantId: string, dedupKeys: readonly string[]): Promise<DedupEventRow[]> {
  const { rows } = await db.query<DedupEventRow>(
    `SELECT dedup_key, channel, scope, reason, original_ref, position,
            to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at
       FROM dedup_event
      WHERE tenant_id = $1 AND dedup_key = ANY($2::text[]) AND channel IN ('http', 'iso8583')
      ORDER BY created_at`,
    [tenantId, dedupKeys],
  );
  return rows;
}
