import { createReadStream } from "node:fs";
import { mkdir, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { watch, type FSWatcher } from "chokidar";
import { limits } from "../config/limits.ts";
import type { Pool } from "../db/pool.ts";
import type { Logger } from "../observability/logger.ts";
import {
  repeatedFailureLog, type RepeatedFailureLog,
} from "../observability/repeated-failure-log.ts";
import type { Partner } from "../partners/partners.ts";
import { ingestArrival, type IngestOptions } from "../files/pipeline.ts";
import { sanitizeFileName, type ReceiptFence } from "../files/receipt.ts";
import { isSourcePaused } from "../incidents/source-pause.ts";

/** Names a drop folder never takes: temp names of a copy in progress and dot files. */
export function isTemporaryName(name: string): boolean {
  return name.startsWith(".") || /\.(part|tmp)$/i.test(name) || name.endsWith("~");
}

export interface DropFolderOptions {
  pool: Pool;
  tenantId: string;
  partner: Partner;
  folder: string;
  logger: Logger;
  ingest?: IngestOptions;
  stableMs?: number;
  rescanIntervalMs?: number;
  /** The folder's lease in a fleet (docs/decisions/0072): each receipt checks it. */
  fence?: ReceiptFence;
}

/** What a drop folder's file is, for its receipt's claim: one file seen twice is one arrival. */
export function dropArrivalKey(
  name: string, info: { size: bigint; mtimeNs: bigint; dev: bigint; ino: bigint },
): string {
  return `${name}/${info.size}/${info.mtimeNs}/${info.dev}:${info.ino}`;
}

/** The failure a fenced receipt throws when the folder's lease was lost (src/fleet/). */
function isLeaseLost(error: unknown): boolean {
  return typeof error === "object" && error !== null
    && (error as { code?: unknown }).code === "FLEET_LEASE_LOST";
}

/**
 * A drop folder: files written into it are received and processed, then moved to `processed/`
 * or `rejected/` with their JSON report beside them. The chokidar watcher only triggers a scan;
 * a periodic rescan is the source of truth (a missed event costs one interval, never a file).
 * A file is taken once its mtime has been quiet for `stableMs` (write-finish detection); temp
 * names (*.part, *.tmp, dot files) are ignored. Files are handled one at a time, in name order.
 * Each receipt claims the file's identity (name, size, mtime, inode): another process watching the
 * same folder, or this one after a crash, finds the receipt instead of making a second one, and
 * finishes the file from where it was. A file whose processing stopped (stop(), a lost lease) is
 * left in the folder for whoever takes the folder next.
 */
export class DropFolder {
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private scanning: Promise<void> = Promise.resolve();
  private rescanQueued = false;
  private stopped = false;
  private readonly stableMs: number;
  // Scans that fail every rescan (the database gone) are logged once per interval (0082).
  private readonly scanFailures: RepeatedFailureLog;

  constructor(private readonly options: DropFolderOptions) {
    this.stableMs = options.stableMs ?? limits.ingest.dropStableMs;
    this.scanFailures = repeatedFailureLog(options.logger,
      "drop folder scan failed; retried at the next rescan");
  }

  get processedFolder(): string {
    return path.join(this.options.folder, "processed");
  }

  get rejectedFolder(): string {
    return path.join(this.options.folder, "rejected");
  }

  async start(): Promise<void> {
    await mkdir(this.processedFolder, { recursive: true });
    await mkdir(this.rejectedFolder, { recursive: true });
    this.watcher = watch(this.options.folder, {
      depth: 0,
      ignoreInitial: true,
      ignored: (file: string) => isTemporaryName(path.basename(file)) && file !== this.options.folder,
      awaitWriteFinish: { stabilityThreshold: this.stableMs, pollInterval: Math.max(50, Math.floor(this.stableMs / 5)) },
    });
    this.watcher.on("add", () => this.trigger());
    this.watcher.on("change", () => this.trigger());
    this.watcher.on("error", (error) => this.options.logger.warn({ err: error, folder: this.options.folder }, "drop folder watcher error; the rescan continues"));
    const interval = this.options.rescanIntervalMs ?? limits.ingest.rescanIntervalMs;
    this.timer = setInterval(() => this.trigger(), interval);
    this.timer.unref();
    this.trigger();
  }

  /** Runs a scan now, or right after the one running (never two at once). */
  trigger(): void {
    if (this.stopped || this.rescanQueued) return;
    this.rescanQueued = true;
    this.scanning = this.scanning.then(async () => {
      this.rescanQueued = false;
      if (this.stopped) return;
      try {
        await this.scan();
        this.scanFailures.succeeded();
      } catch (error) {
        this.scanFailures.failed(error, { folder: this.options.folder });
      }
    });
  }

  /** Resolves once the scans started so far are finished. */
  idle(): Promise<void> {
    return this.scanning;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.watcher?.close();
    await this.scanning;
    this.scanFailures.close();
  }

  private async scan(): Promise<void> {
    // A paused partner (incident) takes no new file; the files wait here until it is resumed.
    if (await isSourcePaused(this.options.pool, this.options.tenantId, `partner:${this.options.partner.partnerId}`)) return;
    const entries = await readdir(this.options.folder, { withFileTypes: true });
    let waiting = false;
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (this.stopped) return;
      if (!entry.isFile() || isTemporaryName(entry.name)) continue;
      const local = path.join(this.options.folder, entry.name);
      const info = await stat(local, { bigint: true }).catch(() => undefined);
      if (!info) continue;
      if (Date.now() - Number(info.mtimeMs) < this.stableMs) {
        waiting = true;
        continue;
      }
      if (!(await this.take(entry.name, local, dropArrivalKey(entry.name, info)))) return;
    }
    if (waiting && !this.stopped) setTimeout(() => this.trigger(), this.stableMs).unref();
  }

  /** Receives and processes one file, then moves it; false when the scan must end (stopped). */
  private async take(name: string, local: string, arrivalKey: string): Promise<boolean> {
    const { pool, tenantId, partner, logger, fence } = this.options;
    const arrival = {
      tenantId, partnerId: partner.partnerId, source: "drop_folder" as const, name,
      content: createReadStream(local), arrivalKey, ...(fence ? { fence } : {}),
    };
    const options = { ...this.options.ingest, isStopped: () => this.stopped };
    const report = await ingestArrival(pool, arrival, options).catch((error: unknown) => {
      if (!isLeaseLost(error)) throw error;
      logger.warn({ code: "FLEET_LEASE_LOST", folder: this.options.folder },
        "the drop folder's lease was lost; its files are left for its next holder");
      return undefined;
    });
    if (report === undefined) return false;
    const safeName = sanitizeFileName(name);
    const base = safeName.ok ? safeName.value : "unnamed";
    if (!report.ok) {
      logger.warn({ file: base, code: report.error.code }, report.error.message);
      await this.moveWithReport(local, this.rejectedFolder, base, { name: base, status: "refused", errors: [{ code: report.error.code, message: report.error.message }] });
      return true;
    }
    const value = report.value;
    if (value.status !== "done" && value.status !== "rejected") {
      // Stopped between two chunks: the file stays here, and whoever scans next finishes it.
      logger.info({ file: base, fileId: value.file_id, status: value.status },
        "drop folder file left unfinished; resumed by the next scan");
      return false;
    }
    logger.info({ file: base, fileId: value.file_id, status: value.status, outcomes: value.outcomes }, "drop folder file ingested");
    await this.moveWithReport(local, value.status === "rejected" ? this.rejectedFolder : this.processedFolder, base, value, value.file_id);
    return true;
  }

  /**
   * The report is written first, then the file moved beside it: a crash in between re-takes the
   * file, whose receipt is then found by its key. A file another process moved meanwhile (two
   * holders of the folder for a moment) is left to it, and the report written here is taken back.
   */
  private async moveWithReport(local: string, folder: string, base: string, report: unknown, fileId?: string): Promise<void> {
    const present = (file: string) => stat(file).then(() => true, () => false);
    if (!(await present(local))) return;   // moved by another process already: its report is there
    const exists = await present(path.join(folder, base));
    const target = exists ? `${fileId ?? Date.now().toString()}-${base}` : base;
    // Written under a temp name and renamed: whoever watches the folder never reads half a report.
    const reportFile = path.join(folder, `${target}.report.json`);
    await writeFile(`${reportFile}.tmp`, JSON.stringify(report, null, 2) + "\n");
    await rename(`${reportFile}.tmp`, reportFile);
    try {
      await rename(local, path.join(folder, target));
    } catch (error) {
      if ((error as { code?: unknown }).code !== "ENOENT") throw error;
      // Moved by the other process: under the same name, the report beside it is its report too.
      if (!(await present(path.join(folder, target)))) await rm(reportFile, { force: true });
      this.options.logger.info({ file: base, fileId },
        "drop folder file already moved by another process");
    }
  }
}
