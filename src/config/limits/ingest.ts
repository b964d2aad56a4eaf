// Bounds of the ingest channel: every queue, buffer, size and timeout, each with its unit and why.
export const ingestLimits = {
  // One received file. A 1,000,000-entry ACH file is about 100 MB; bulk ISO 20022 files stay under
  // 1 GiB (limits.iso20022.fileBytesMax). Past this a receipt is refused before anything is stored.
  fileBytesMax: 1_073_741_824,
  // A stored file is kept in pieces of this size: receipt and read-back hold one piece at a time.
  contentPieceBytes: 1_048_576,
  // HTTP uploads (POST /v1/files) are buffered whole before the receipt: 64 MiB holds a 600,000-entry
  // ACH file; bigger files go through SFTP or the drop folder, which stream.
  httpUploadBytesMax: 67_108_864,
  // A stored piece is handed to the readers in slices of this size: a reader turns a slice into
  // events at once, so 64 KiB (about 680 ACH entries) bounds the records waiting in memory.
  readSliceBytes: 65_536,
  // Records per chunk transaction. Each chunk inserts its keys, posts, writes outcomes and advances
  // the file in ONE transaction: 2,000 keeps a chunk well under a second and its locks short, and
  // amortizes the commit's WAL flush over enough records (measured in bench/ingest.bench.ts).
  chunkRecordsMax: 2_000,
  // Findings kept on a file's receipt (file scope) and errors listed in its report; all are counted.
  findingsMax: 1_000,
  // Original file names: longer names are cut (the receipt keeps the sanitized name only).
  fileNameCharsMax: 200,
  // A `processing` file whose heartbeat is older than this is presumed abandoned (its worker died)
  // and resumed by the periodic job. A chunk takes well under a second, so 60 s is generous.
  staleProcessingMs: 60_000,
  // A file whose run failed in this process (the database went away mid-file) is taken up again
  // by it after 0.5 s, doubling to 5 s, until staleProcessingMs hands it to the periodic job;
  // at most this many at once (more are left to that job).
  abandonedFileFirstRetryMs: 500,
  abandonedFileRetryMaxMs: 5_000,
  abandonedFilesMax: 1_000,
  // How often `serve` looks for abandoned files and rescans drop folders (the watcher is a trigger,
  // the rescan the source of truth).
  rescanIntervalMs: 10_000,
  // A dropped file is taken once its size and mtime are unchanged for this long (write-finish).
  dropStableMs: 500,
  // Suspect window: a new key whose content equals a record applied from another file within this
  // window is held for review. A corrected re-upload arrives within days; a week covers a weekend
  // and a holiday. Configurable per service (ingestSuspectWindowHours).
  suspectWindowHours: 168,
  // Rows listed by `clearline files`, `review list` and GET /v1/files per call.
  listRowsMax: 1_000,
  // Per-record outcomes shown by `clearline file show` and GET /v1/files/{id}.
  showRecordsMax: 10_000,
  // Records on one page of the console's file page: a screen an operator reads, and one indexed
  // range of a file's outcome rows per page (the next page starts after the last record shown).
  filePageRecordsMax: 100,
  // A dry run keeps the natural keys (and new keys' fingerprints) of the file it reads to name the
  // records a correction drops: about 100 bytes each, so 500,000 records hold ~50 MB. Past it the
  // dry run says it did not check; the ingest report (read from the database) always checks.
  dropCheckRecordsMax: 500_000,
  // SFTP: connection and per-operation timeout; a partner that does not answer in 20 s is down.
  sftpTimeoutMs: 20_000,
  // SFTP: a keepalive every 5 s, and the connection given up after 3 unanswered: a server gone
  // silent (a half-open connection after a network reset, a hung server) fails the poll within
  // about 20 s instead of holding it until TCP gives up (minutes, or never on an idle read).
  sftpKeepaliveIntervalMs: 5_000,
  sftpKeepaliveCountMax: 3,
  // SFTP: a poll whose network step (connect, list, download, archive) has waited longer than this
  // makes /readyz not ready, naming the step: past three operation timeouts, every bound the
  // client sets has failed to end it, so the partner's files wait behind a hung poll (the soak's
  // seed 7 found one). Processing a downloaded file is not a network step and is not judged.
  sftpStepStallMs: 60_000,
  // SFTP: how often a partner's inbox is listed when things go well.
  sftpPollIntervalMs: 30_000,
  // SFTP: backoff after a failure doubles from the poll interval up to this bound (10 minutes).
  sftpBackoffMaxMs: 600_000,
  // SFTP: files taken per poll; the rest wait for the next poll (bounds one poll's duration).
  sftpFilesPerPollMax: 100,
} as const;
