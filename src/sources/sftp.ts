import { createReadStream } from "node:fs";
import { mkdir, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import SftpClient from "ssh2-sftp-client";
import { limits } from "../config/limits.ts";
import type { Pool } from "../db/pool.ts";
import type { Logger } from "../observability/logger.ts";
import { sftpFilesTaken, sftpPollFailures } from "../observability/metrics-ingest.ts";
import { isTemporaryName } from "./drop-folder.ts";
import type { Partner } from "../partners/partners.ts";
import { ingestArrival, type IngestOptions } from "../files/pipeline.ts";
import type { FileReport } from "../files/report.ts";
import { sanitizeFileName, type ReceiptFence } from "../files/receipt.ts";
import { hostKeyFingerprint, type SftpPartnerSource } from "../config/sources-config.ts";
import { isSourcePaused } from "../incidents/source-pause.ts";

export class HostKeyMismatch extends Error {
  readonly code = "SOURCE_SFTP_HOST_KEY_MISMATCH";
  constructor(readonly presented: string) {
    super(`the server presented host key ${presented}, not the configured fingerprint: connection refused`);
  }
}

export interface SftpPollerOptions {
  pool: Pool;
  tenantId: string;
  partner: Partner;
  source: SftpPartnerSource;
  spoolFolder: string;
  logger: Logger;
  ingest?: IngestOptions;
  /** The partner's lease in a fleet (docs/decisions/0072): each receipt checks it. */
  fence?: ReceiptFence;
  /** limits.ingest's SFTP timeouts where not given (tests shorten them). */
  timeouts?: Partial<SftpTimeouts>;
}

export interface SftpTimeouts {
  operationMs: number;
  keepaliveIntervalMs: number;
  /** A network step waiting longer than this makes the poller not ready (health()). */
  stepStallMs: number;
}

/** A poll's step in progress: a network step is judged by stepStallMs, processing is not. */
interface PollStep {
  name: string;
  network: boolean;
  sinceMs: number;
}

/** What a partner's file is, for its receipt's claim: its name, size and time in the listing. */
export function sftpArrivalKey(file: { name: string; size: number; modifyTime: number }): string {
  return `${file.name}/${file.size}/${file.modifyTime}`;
}

export interface PollResult {
  taken: FileReport[];
  waiting: string[];         // files seen whose size was not yet stable (or whose done marker is missing)
}

/**
 * One SFTP partner: its inbox is listed every poll; a file is taken only when its size is the same
 * in two listings (and its done marker exists, when configured); it is downloaded to the local
 * spool (temp name, then rename), received and processed, and only after that commit moved to
 * the remote archive (or deleted). If the move fails, the next poll takes the file again and its
 * records come back as duplicates. One connection per partner, one operation at a time, `end()`
 * always; a failure doubles the wait before the next poll, up to sftpBackoffMaxMs.
 */
export class SftpPoller {
  private readonly seenSizes = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private failures = 0;
  private lastFailure = "";
  private succeeded = false;
  private stopped = false;
  private step: PollStep | undefined;
  private readonly pattern: RegExp;
  private readonly timeouts: SftpTimeouts;

  constructor(private readonly options: SftpPollerOptions) {
    this.pattern = new RegExp(options.source.namePattern);
    this.timeouts = {
      operationMs: limits.ingest.sftpTimeoutMs,
      keepaliveIntervalMs: limits.ingest.sftpKeepaliveIntervalMs,
      stepStallMs: limits.ingest.sftpStepStallMs,
      ...options.timeouts,
    };
  }

  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running.catch(() => undefined);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.poll().then(
        () => {
          this.failures = 0;
          this.succeeded = true;
          this.schedule(this.options.source.pollIntervalMs);
        },
        (error: unknown) => {
          this.failures++;
          this.lastFailure = error instanceof Error && error.message !== "" ? error.message : String(error);
          sftpPollFailures.inc({ partner: this.options.partner.name });
          const code = error instanceof HostKeyMismatch ? error.code : undefined;
          this.options.logger.warn({ err: error, code, failures: this.failures }, "SFTP poll failed; backing off");
          this.schedule(this.backoffMs());
        },
      );
    }, delayMs);
    this.timer.unref();
  }

  /**
   * For /readyz: polling means the last poll succeeded and the poll under way is not stuck in a
   * network step; a failing or stuck partner is named with its error or its step.
   */
  health(): { ok: boolean; reason?: string } {
    const name = `SFTP partner ${this.options.partner.name} (${this.options.source.host}:${this.options.source.port})`;
    const step = this.step;
    const waitedMs = step === undefined ? 0 : Date.now() - step.sinceMs;
    if (step?.network === true && waitedMs > this.timeouts.stepStallMs) {
      return { ok: false, reason: `${name}: a poll is stuck in ${step.name} for ${Math.round(waitedMs / 1000)} s` };
    }
    if (this.failures > 0) return { ok: false, reason: `${name}: ${this.failures} consecutive polls failed, the last with: ${this.lastFailure}` };
    if (!this.succeeded) return { ok: false, reason: `${name}: no poll has finished yet` };
    return { ok: true };
  }

  backoffMs(): number {
    return Math.min(this.options.source.pollIntervalMs * 2 ** Math.min(this.failures, 20), limits.ingest.sftpBackoffMaxMs);
  }

  /** One poll: connect, list, take the stable files, archive them, end. Exposed for tests. */
  async poll(): Promise<PollResult> {
    const { source } = this.options;
    const result: PollResult = { taken: [], waiting: [] };
    // A paused partner (incident) is not even connected to; its files wait on its server.
    if (await isSourcePaused(this.options.pool, this.options.tenantId, `partner:${this.options.partner.partnerId}`)) return result;
    const client = new SftpClient(`clearline-${this.options.partner.name}`);
    const { timeouts } = this;
    let mismatch: HostKeyMismatch | undefined;
    try {
      const privateKey = await readFile(source.privateKeyPath);
      this.enter("connect", true);
      try {
        await client.connect({
          host: source.host, port: source.port, username: source.username, privateKey,
          readyTimeout: timeouts.operationMs, timeout: timeouts.operationMs, retries: 0,
          keepaliveInterval: timeouts.keepaliveIntervalMs,
          keepaliveCountMax: limits.ingest.sftpKeepaliveCountMax,
          hostVerifier: (key: Buffer) => {
            const presented = hostKeyFingerprint(key);
            if (presented === source.hostKeySha256) return true;
            mismatch = new HostKeyMismatch(presented);
            return false;
          },
        });
      } catch (error) {
        throw mismatch ?? error;
      }
      this.enter("list", true);
      const listing = await client.list(source.inbox);
      const names = new Set(listing.map((f) => f.name));
      const candidates = listing
        .filter((f) => f.type === "-" && !isTemporaryName(f.name) && this.pattern.test(f.name))
        .filter((f) => !(source.doneMarkerSuffix && f.name.endsWith(source.doneMarkerSuffix)))
        .sort((a, b) => (a.name < b.name ? -1 : 1));
      const current = new Map(candidates.map((f) => [f.name, f.size]));
      for (const name of [...this.seenSizes.keys()]) if (!current.has(name)) this.seenSizes.delete(name);
      for (const file of candidates) {
        if (this.stopped || result.taken.length >= limits.ingest.sftpFilesPerPollMax) break;
        const stable = this.seenSizes.get(file.name) === file.size;
        this.seenSizes.set(file.name, file.size);
        const marked = !source.doneMarkerSuffix || names.has(`${file.name}${source.doneMarkerSuffix}`);
        if (!stable || !marked) {
          result.waiting.push(file.name);
          continue;
        }
        const report = await this.take(client, file);
        this.seenSizes.delete(file.name);
        if (report === undefined) break;     // stopped mid-file: the rest waits for the next holder
        result.taken.push(report);
      }
      return result;
    } finally {
      // end() waits for the server's close: on a dead connection it is bounded, never awaited
      // for ever (the socket is destroyed with the client either way).
      this.enter("end", true);
      await endWithin(client, timeouts.operationMs);
      this.step = undefined;
    }
  }

  private enter(name: string, network: boolean): void {
    this.step = { name, network, sinceMs: Date.now() };
  }

  /** Receives one file and archives it; undefined when its processing stopped before the end. */
  private async take(
    client: SftpClient, file: { name: string; size: number; modifyTime: number },
  ): Promise<FileReport | undefined> {
    const { source, partner, pool, tenantId, logger, fence } = this.options;
    const name = file.name;
    const remote = path.posix.join(source.inbox, name);
    const safe = sanitizeFileName(name);
    const localName = safe.ok ? safe.value : "unnamed";
    await mkdir(this.options.spoolFolder, { recursive: true });
    const spooled = path.join(this.options.spoolFolder, localName);
    const partial = `${spooled}.part`;
    this.enter(`download of ${name}`, true);
    await client.fastGet(remote, partial);
    await rename(partial, spooled);
    const arrival = {
      tenantId, partnerId: partner.partnerId, source: "sftp" as const, name,
      content: createReadStream(spooled), arrivalKey: sftpArrivalKey(file),
      ...(fence ? { fence } : {}),
    };
    const options = { ...this.options.ingest, isStopped: () => this.stopped };
    this.enter(`processing of ${name}`, false);
    const report = await ingestArrival(pool, arrival, options);
    if (!report.ok) throw new Error(`${name}: ${report.error.code}: ${report.error.message}`);
    // Stopped between two chunks: the remote file stays in the inbox; its receipt is found again.
    if (report.value.status !== "done" && report.value.status !== "rejected") return undefined;
    sftpFilesTaken.inc({ partner: partner.name });
    logger.info({ file: name, fileId: report.value.file_id, status: report.value.status, outcomes: report.value.outcomes }, "SFTP file ingested");
    // Only now, after the commit: archive (or delete) the remote file and its marker.
    this.enter(`archive of ${name}`, true);
    const marker = source.doneMarkerSuffix ? `${remote}${source.doneMarkerSuffix}` : undefined;
    if (report.value.status === "rejected") {
      // A refused file is kept apart from the archive (never deleted): the partner finds it beside
      // the rejection report clearline sends it (docs/decisions/0025).
      const rejected = source.rejected ?? "rejected";
      if (!(await client.exists(rejected))) await client.mkdir(rejected, true);
      await client.rename(remote, path.posix.join(rejected, `${report.value.file_id}-${name}`));
      if (marker) await client.delete(marker, true);
    } else if (source.deleteAfter) {
      await client.delete(remote);
      if (marker) await client.delete(marker, true);
    } else {
      const archive = source.archive ?? "archive";
      await client.rename(remote, path.posix.join(archive, `${report.value.file_id}-${name}`));
      if (marker) await client.delete(marker, true);
    }
    await rm(spooled, { force: true });
    return report.value;
  }
}

/** Ends an SFTP client, waiting at most `timeoutMs` for the server to close its side. */
async function endWithin(client: SftpClient, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
    timer.unref();
  });
  await Promise.race([client.end().catch(() => undefined), waited]);
  clearTimeout(timer);
}
