import { limits } from "../config/limits.ts";
import type { Pool } from "../db/pool.ts";
import type { Logger } from "../observability/logger.ts";
import { processFile, type IngestOptions } from "./pipeline.ts";

interface Abandoned {
  tenantId: string;
  fileId: string;
  attempts: number;
  firstAtMs: number;
}

export interface AbandonedFilesBounds {
  firstRetryMs: number;
  retryMaxMs: number;
}

/**
 * Files whose processing failed in this process (the database went away mid-file: a reset, a
 * failover) are taken up again here as soon as it answers, with a doubling pause, instead of
 * waiting out limits.ingest.staleProcessingMs for the periodic job: the HTTP client that got
 * the 500 may never send the file again, and the soak saw such a file finish a minute after its
 * fault healed. A second run of a file beside another is safe: its chunks are fenced by its
 * progress (docs/decisions/0010). Past staleProcessingMs a file is the periodic job's again.
 */
export class AbandonedFiles {
  private readonly files = new Map<string, Abandoned>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  private stopped = false;
  private overflowed = 0;

  constructor(
    private readonly pool: Pool,
    private readonly logger: Logger,
    private readonly options: IngestOptions = {},
    private readonly bounds: AbandonedFilesBounds = {
      firstRetryMs: limits.ingest.abandonedFileFirstRetryMs,
      retryMaxMs: limits.ingest.abandonedFileRetryMaxMs,
    },
  ) {}

  /** Options for processFile that note a failed run here. */
  ingestOptions(): IngestOptions {
    return { ...this.options, onAbandoned: (file) => this.note(file.tenantId, file.fileId) };
  }

  note(tenantId: string, fileId: string): void {
    if (this.stopped) return;
    const id = `${tenantId}/${fileId}`;
    const known = this.files.get(id);
    if (!known && this.files.size >= limits.ingest.abandonedFilesMax) {
      // The periodic job takes it after staleProcessingMs; counted, not logged per file.
      this.overflowed++;
      return;
    }
    const file = known ?? { tenantId, fileId, attempts: 0, firstAtMs: Date.now() };
    this.files.set(id, file);
    if (Date.now() - file.firstAtMs > limits.ingest.staleProcessingMs) {
      this.files.delete(id);
      return;
    }
    const pauseMs = Math.min(this.bounds.firstRetryMs * 2 ** file.attempts, this.bounds.retryMaxMs);
    file.attempts++;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const run = this.retry(id, file).finally(() => this.running.delete(run));
      this.running.add(run);
    }, pauseMs);
    timer.unref();
    this.timers.add(timer);
  }

  /** How many abandoned files were left to the periodic job because the set was full. */
  overflowCount(): number {
    return this.overflowed;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.allSettled([...this.running]);
    this.files.clear();
  }

  private async retry(id: string, file: Abandoned): Promise<void> {
    if (this.stopped) return;
    try {
      const report = await processFile(this.pool, file.tenantId, file.fileId, {
        ...this.options, isStopped: () => this.stopped,
      });
      this.files.delete(id);
      this.logger.info({ fileId: file.fileId, status: report.status, attempts: file.attempts },
        "file whose processing failed taken up again");
    } catch (error) {
      if (file.attempts === 1) {
        this.logger.warn({ err: error, fileId: file.fileId }, "file retry failed; retrying");
      }
      this.note(file.tenantId, file.fileId);
    }
  }
}
