import { routingCheckDigit } from "../../src/protocols/ach/routing.ts";
import { writeAchFile, type AchEntryModel, type AchFieldValues } from "../../src/protocols/ach/writer.ts";

/** NACHA files written for the tests: one PPD batch per effective date, from a few lines of description. */
export interface AchEntrySpec {
  code: "22" | "27" | "21" | "26";      // credit, debit; returns of a credit, of a debit
  amountMinor: bigint;
  trace: string;                         // 15 digits: ODFI (8) + sequence (7)
  returnOf?: { trace: string; reason: string };
}

const rdfi = "09100001";
const fileHeader: AchFieldValues = {
  priorityCode: "01", immediateDestination: " 091000019", immediateOrigin: " 231380104", fileCreationDate: "261201",
  fileCreationTime: "1800", fileIdModifier: "A", immediateDestinationName: "CLEARLINE BANK", immediateOriginName: "PARTNER ONE",
};

function entryOf(spec: AchEntrySpec): AchEntryModel {
  const fields: AchFieldValues = {
    transactionCode: spec.code, receivingDfiIdentification: rdfi, checkDigit: routingCheckDigit(rdfi), dfiAccountNumber: "12345678",
    amount: String(spec.amountMinor), individualIdentificationNumber: `ID${spec.trace.slice(-7)}`, individualName: "RECEIVER", traceNumber: spec.trace,
  };
  if (spec.returnOf === undefined) return { fields };
  return {
    fields,
    addenda: [{ addendaTypeCode: "99", returnReasonCode: spec.returnOf.reason, originalEntryTraceNumber: spec.returnOf.trace, originalReceivingDfiIdentification: rdfi, traceNumber: spec.trace }],
  };
}

/** A file with one batch per `effective` date (YYMMDD), entries in trace order. */
export function achFile(batches: Array<{ effective: string; entries: AchEntrySpec[]; modifier?: string }>, modifier = "A"): Buffer {
  const written = writeAchFile({
    fileHeader: { ...fileHeader, fileIdModifier: modifier },
    batches: batches.map((batch, index) => ({
      header: {
        serviceClassCode: "200", companyName: "PARTNER ONE", companyIdentification: "1231380104", standardEntryClassCode: "PPD",
        companyEntryDescription: batch.entries.some((e) => e.returnOf) ? "RETURN" : "PAYROLL", effectiveEntryDate: batch.effective, originatorStatusCode: "1",
        originatingDfiIdentification: "23138010", batchNumber: String(index + 1),
      },
      entries: [...batch.entries].sort((a, b) => a.trace.localeCompare(b.trace)).map(entryOf),
    })),
  });
  if (!written.ok) throw new Error(written.error.message);
  return written.value;
}
