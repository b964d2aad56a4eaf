/**
 * Where in the input something went wrong. Every error about input names its position so that
 * an operator can open the file (or the trace) at the right place.
 */
export interface Position {
  file?: string;
  line?: number;            // 1-based line (ACH record number)
  column?: number;          // 1-based column within the line
  recordType?: string;      // ACH record type code ("1", "5", "6", "7", "8", "9")
  field?: string;           // field name from the layout or schema
  xmlPath?: string;         // /Document/FIToFICstmrCdtTrf/CdtTrfTxInf[3]/...
  fieldPath?: string[];     // ISO 8583 field path, e.g. ["90", "2"]
  byteOffset?: number;      // offset in the decoded byte buffer
  transactionIndex?: number;
}
