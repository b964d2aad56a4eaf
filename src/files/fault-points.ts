/**
 * Named fault points of the ingestion pipeline, between the steps of a file and of each chunk.
 * They do nothing unless CLEARLINE_FAULT_POINT names one; then the process is killed right there
 * (SIGKILL: no cleanup, no flush). CLEARLINE_FAULT_AFTER=N fires on the Nth time the point is
 * reached (default 1), so a test can kill in the middle of a large file. Tests prove that
 * re-ingesting or resuming after any of these gives the result of one clean run.
 */
export const ingestFaultPoints = [
  "ingest_after_receipt",        // the file is stored, nothing read
  "ingest_after_scan",           // validated, status not yet written
  "ingest_chunk_after_keys",     // dedup marks inserted, nothing posted (uncommitted)
  "ingest_chunk_after_posting",  // transfers posted, outcomes not written (uncommitted)
  "ingest_chunk_after_outcomes", // outcomes written, progress not advanced (uncommitted)
  "ingest_chunk_after_commit",   // a chunk committed, the next not started
  "ingest_before_finish",        // every chunk committed, status still `processing`
] as const;

export type IngestFaultPoint = (typeof ingestFaultPoints)[number];

const hits = new Map<string, number>();

export function ingestFaultPoint(name: IngestFaultPoint): void {
  if (process.env.CLEARLINE_FAULT_POINT !== name) return;
  const count = (hits.get(name) ?? 0) + 1;
  hits.set(name, count);
  const after = Number(process.env.CLEARLINE_FAULT_AFTER ?? "1");
  if (count >= after) process.kill(process.pid, "SIGKILL");
}
