import { assert } from "../../assert.ts";
import { transactionCodeInfo } from "./codes.ts";
import type { RecordFields } from "./fixed-width.ts";
import { routingCheckDigit } from "./routing.ts";
import type { AchBatchModel, AchFileModel } from "./writer.ts";

/** One entry to return: the original as it was read, and why it goes back. */
export interface ReturnedEntry {
  fileHeader: RecordFields;        // the original file's header
  batchHeader: RecordFields;       // the original entry's batch header
  entry: RecordFields;             // the original entry detail record
  reasonCode: string;              // R01..R85
  batchRef: string;                // entries with one batchRef (file and batch) go back in one batch
}

export interface ReturnFileInput {
  createdAt: Date;                 // the cut-off time: file creation date and time, effective date
  entries: ReturnedEntry[];        // in the order they are written
}

const trim = (value: string | undefined) => (value ?? "").trim();

/** The return transaction code of a forward code: same account and direction, purpose "return" (27 -> 26). */
export function returnTransactionCode(forward: string): string | undefined {
  const info = transactionCodeInfo(forward);
  if (!info || info.purpose === "return") return undefined;
  for (let unit = 0; unit <= 9; unit++) {
    const candidate = `${forward.slice(0, 1)}${unit}`;
    const other = transactionCodeInfo(candidate);
    if (other && other.purpose === "return" && other.account === info.account && other.direction === info.direction) return candidate;
  }
  return undefined;
}

function yymmdd(date: Date): string {
  return date.toISOString().slice(2, 10).replaceAll("-", "");
}

/**
 * The return file of refused entries, as the RDFI writes it back to the ODFI: the file header's
 * origin and destination swapped; one batch per original batch (its company, SEC code and
 * description kept, the RDFI as originating DFI); each entry with the return transaction code,
 * the ODFI as receiving DFI, the original account, amount and names, a new trace in the RDFI's
 * scope, and an addenda 99 carrying the reason, the original entry's trace and the original RDFI.
 */
export function returnFileModel(input: ReturnFileInput): AchFileModel {
  const first = input.entries[0];
  assert(first !== undefined, "a return file returns at least one entry");
  const origin = first.fileHeader;
  const batches = new Map<string, AchBatchModel>();
  let sequence = 0;
  for (const returned of input.entries) {
    const original = returned.entry;
    const rdfi = trim(original.receivingDfiIdentification);
    const originalTrace = trim(original.traceNumber);
    const odfi = originalTrace.slice(0, 8);
    const code = returnTransactionCode(trim(original.transactionCode));
    assert(code !== undefined, `entry with transaction code ${original.transactionCode} has a return code`);
    let batch = batches.get(returned.batchRef);
    if (!batch) {
      batch = {
        header: {
          ...returned.batchHeader, serviceClassCode: "200", effectiveEntryDate: yymmdd(input.createdAt), settlementDate: "",
          originatorStatusCode: "1", originatingDfiIdentification: rdfi, batchNumber: String(batches.size + 1),
        },
        entries: [],
      };
      batches.set(returned.batchRef, batch);
    }
    sequence++;
    const trace = `${rdfi}${String(sequence).padStart(7, "0")}`;
    batch.entries.push({
      fields: { ...original, transactionCode: code, receivingDfiIdentification: odfi, checkDigit: routingCheckDigit(odfi) ?? "0", traceNumber: trace },
      addenda: [{ addendaTypeCode: "99", returnReasonCode: returned.reasonCode, originalEntryTraceNumber: originalTrace, dateOfDeath: "", originalReceivingDfiIdentification: rdfi, addendaInformation: "", traceNumber: trace }],
    });
  }
  return {
    fileHeader: {
      priorityCode: "01", immediateDestination: origin.immediateOrigin, immediateOrigin: origin.immediateDestination,
      fileCreationDate: yymmdd(input.createdAt), fileCreationTime: input.createdAt.toISOString().slice(11, 16).replace(":", ""),
      fileIdModifier: "R", immediateDestinationName: origin.immediateOriginName, immediateOriginName: origin.immediateDestinationName, referenceCode: "RETURNS",
    },
    batches: [...batches.values()],
  };
}
