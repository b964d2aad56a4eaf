// Bounds of the ach channel: every queue, buffer, size and timeout, each with its unit and why.
export const achLimits = {
  // A 1,000,000-entry file is about 100 MB; the largest real operator files are a few hundred MB.
  // 4 GiB keeps a runaway stream (a device file, a bad upload) from being read forever.
  fileBytesMax: 4 * 1024 * 1024 * 1024,
  // A record is 94 characters; a line past 1 KiB is not a NACHA record gone slightly wrong. Bytes
  // past this bound are not kept, so the line buffer stays bounded whatever the input.
  lineBytesMax: 1_024,
  // Findings kept for the whole file (all are still counted): enough to fix a file, bounded for a hostile one.
  findingsMax: 1_000,
  // Findings attached to one entry event: an entry has a dozen fields and a handful of rules.
  entryFindingsMax: 64,
  // CTX counts its addenda in a 4-digit field: 9,999 is the most a valid entry can carry. An entry
  // and its addenda are held together until the next entry, so this bounds that buffer (~940 KB).
  addendaPerEntryMax: 9_999,
  // Records listed by `clearline inspect` (all are counted): an operator reads a sample, not a million lines.
  inspectRecordsMax: 10_000,
} as const;
