// Bounds of the iso20022 channel: every queue, buffer, size and timeout, each with its unit and why.
export const iso20022Limits = {
  // Whole file read by the streaming reader. A 100,000-transaction pacs.008 is about 60 MB; bulk
  // files of a million transactions stay under 1 GiB. Past this we stop reading, not buffering.
  fileBytesMax: 1_073_741_824,
  // Single message parsed whole by fast-xml-parser (a tree costs ~15x the text in memory): a status
  // report or one payment, never a bulk file. Bigger inputs must go through the streaming reader.
  messageBytesMax: 4_194_304,
  // Element nesting. The deepest ISO 20022 path inside a SWIFT or FedNow wrapper is about 20 levels;
  // 64 leaves headroom and stops a "<a><a><a>..." stack bomb long before it costs anything.
  depthMax: 64,
  // Bytes between two markup delimiters ('<' or '>'): element text, an attribute value, a comment.
  // The largest ISO 20022 text type is Max100KBinary (about 134 KiB in base64); 256 KiB allows it and
  // bounds what the XML tokenizer may hold in one piece.
  elementTextBytesMax: 262_144,
  // Transactions in one file (CdtTrfTxInf, TxInfAndSts, TxInf, Ntry). Bulk clearing files carry up to
  // a few hundred thousand; a million bounds the ingestion of a runaway generator.
  transactionsMax: 1_000_000,
  // Elements kept in memory for one transaction, group header or payment-information block. A rich
  // pacs.008 transaction has about 150 elements; 4,096 bounds one transaction to well under 1 MiB.
  captureElementsMax: 4_096,
  // Findings kept per file; more are counted, not stored, so a broken file cannot exhaust memory.
  findingsMax: 1_000,
  // Bytes handed to the XML tokenizer at once: slicing large buffers bounds its internal buffers.
  chunkBytes: 65_536,
  // Occurrences of a repeated field read per transaction (ChrgsInf: one per agent that deducted
  // charges; a cross-border chain rarely passes ten agents). A mapping may ask for fewer.
  fieldRepeatsMax: 32,
  // Records `inspect` lists in full; the rest are counted only (the report stays readable).
  inspectRecordsMax: 10_000,
} as const;
