// Public surface of the ISO 20022 codec: what the ingestion pipeline and the CLI import.
export { readIso20022, readIso20022Sync, Iso20022StreamReader, readerLimits, type Iso20022Source, type ReadOptions, type ReaderLimits } from "./reader.ts";
export { parseIso20022Message } from "./message-parser.ts";
export { writePacs002, type Pacs002Input, type TransactionStatus } from "./pacs002-writer.ts";
export { mappingFor, supportedFamilies, supportedVersions, type MessageMapping } from "./mapping.ts";
export { parseMessageIdentifier, type MessageIdentifier } from "./message-identifier.ts";
export type { FieldValues, FindingScope, Iso20022Context, Iso20022Event, Iso20022Finding, Iso20022Header, Iso20022Summary, Iso20022Transaction } from "./types.ts";
