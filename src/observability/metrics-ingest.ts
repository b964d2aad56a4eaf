import { Counter, Gauge } from "prom-client";
import { registry } from "./metrics.ts";

/** Records by outcome and channel: the share of duplicates and conflicts is what operations watch. */
export const ingestRecords = new Counter({
  name: "clearline_ingest_records_total",
  help: "Records of received files by outcome (applied, duplicate, conflict, suspect, rejected, orphan) and channel",
  labelNames: ["channel", "outcome"] as const,
  registers: [registry],
});

export const ingestFilesFinished = new Counter({
  name: "clearline_ingest_files_finished_total",
  help: "Files this process finished, by final status (done, rejected)",
  labelNames: ["status"] as const,
  registers: [registry],
});

export const ingestFilesByStatus = new Gauge({
  name: "clearline_ingest_files",
  help: "Received files by status (received, processing, done, rejected), as of the last periodic count",
  labelNames: ["status"] as const,
  registers: [registry],
});

export const ingestOldestProcessingAge = new Gauge({
  name: "clearline_ingest_oldest_processing_age_seconds",
  help: "Age of the oldest file still received or processing: a stuck pipeline shows here first",
  registers: [registry],
});

export const sftpPollFailures = new Counter({
  name: "clearline_ingest_sftp_poll_failures_total",
  help: "SFTP polls that failed (connect, host key, list, download), per partner",
  labelNames: ["partner"] as const,
  registers: [registry],
});

export const sftpFilesTaken = new Counter({
  name: "clearline_ingest_sftp_files_total",
  help: "Files downloaded from an SFTP partner and received, per partner",
  labelNames: ["partner"] as const,
  registers: [registry],
});
