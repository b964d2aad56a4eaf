// Bounds of what clearline sends back to partners (status reports, return files, deliveries).
export const partnerLimits = {
  // Entries one return file carries. A cut takes at most this many pending returns (the oldest);
  // the rest wait for the next cut. 10,000 entries with their addenda are about 2 MB of NACHA text.
  returnEntriesPerFileMax: 10_000,
  // Original files one cut reads back to rebuild the entries it returns (each read whole, one at a time).
  returnSourceFilesPerCutMax: 1_000,
  // Transactions one pacs.002 status report answers: a file with more is answered in its first
  // this many (the status of all is in its report). Equal to limits.ingest.showRecordsMax, the
  // most outcomes one read of a file returns; 10,000 lines are about 4 MB of XML.
  statusTransactionsMax: 10_000,
  // One delivery to a partner's SFTP server, connection to rename: a stalled server fails the
  // attempt (the outbox retries it) instead of holding the relay. Equal to the relay's own
  // delivery timeout (limits.outbox.deliveryTimeoutMs), which aborts the attempt as well.
  sftpDeliveryTimeoutMs: 10_000,
  // How often `clearline serve` looks whether a partner's return cut-off time has passed: a cut
  // leaves at most this long after its cut-off (the file is keyed by the cut-off, not the check).
  returnCutoffCheckIntervalMs: 60_000,
  // Files listed by `clearline partner files`.
  listRowsMax: 1_000,
} as const;
