import { assert } from "../../assert.ts";
import { limits } from "../../config/limits.ts";
import type { Tx } from "../../db/transaction.ts";
import { storedContent } from "../../ingest/receipt.ts";
import { fileOutcomes } from "../../ingest/report.ts";
import { readIso20022 } from "../../protocols/iso20022/reader.ts";
import { writePacs002, type TransactionStatus } from "../../protocols/iso20022/pacs002-writer.ts";
import { groupStatusOf, transactionStatusOf } from "../../protocols/iso20022/status-reasons.ts";
import type { Iso20022Header } from "../../protocols/iso20022/types.ts";
import { announceOutboundFile } from "../outbound/announce.ts";
import { storeOutboundFile } from "../outbound/outbound-store.ts";

const uetrPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The messages answered with a pacs.002 status report. */
const reportedFamilies = new Set(["pacs.008", "pain.001"]);

/** The key of a file's status report: the same content received again is answered by the same report. */
export function statusReportKeyOf(contentHash: string): string {
  return `${contentHash}:status`;
}

interface OriginalIds {
  header?: Iso20022Header;
  transactions: Map<number, Pick<TransactionStatus, "originalInstrId" | "originalEndToEndId" | "originalTxId" | "originalUetr">>;
}

/** The original message's header and each transaction's references, read back from the stored file. */
async function originalIds(tx: Tx, tenantId: string, fileId: string): Promise<OriginalIds> {
  const ids: OriginalIds = { transactions: new Map() };
  let index = 0;
  for await (const event of readIso20022(storedContent(tx, tenantId, fileId))) {
    if (event.type === "header") ids.header = event.header;
    if (event.type !== "transaction") continue;
    index++;
    if (index > limits.partners.statusTransactionsMax) continue;
    const v = event.transaction.values;
    const references: Pick<TransactionStatus, "originalInstrId" | "originalEndToEndId" | "originalTxId" | "originalUetr"> = {};
    if (v.InstrId) references.originalInstrId = v.InstrId;
    if (v.EndToEndId) references.originalEndToEndId = v.EndToEndId;
    if (v.TxId) references.originalTxId = v.TxId;
    // An invalid UETR (the reason a line may be rejected) is not echoed: our own reader would refuse the report.
    if (v.UETR && uetrPattern.test(v.UETR)) references.originalUetr = v.UETR;
    ids.transactions.set(index, references);
  }
  return ids;
}

/**
 * Writes the pacs.002 that answers a finished pacs.008 or pain.001 file and stores it for the
 * partner, in the transaction that marks the file done: one line per transaction (ACSC, ACCP or
 * RJCT with its ISO reason, protocols/iso20022/status-reasons.json) and the group status. Files
 * of other messages are not answered. True when a report was stored now.
 */
export async function reportFileStatus(tx: Tx, file: { tenantId: string; fileId: string; partnerId: string; contentHash: string; createdAt: Date }): Promise<boolean> {
  const original = await originalIds(tx, file.tenantId, file.fileId);
  const header = original.header;
  if (!header || !reportedFamilies.has(header.message.family)) return false;
  const outcomes = await fileOutcomes(tx, file.tenantId, file.fileId, limits.partners.statusTransactionsMax);
  const lines: TransactionStatus[] = [];
  for (const outcome of outcomes) {
    const references = original.transactions.get(outcome.index);
    assert(references !== undefined, `transaction ${outcome.index} of file ${file.fileId} was read back`);
    lines.push({ ...references, ...transactionStatusOf(outcome.outcome, outcome.code, outcome.detail) });
  }
  // A transaction without any reference cannot be named on a line; it still counts in the group status.
  const transactions = lines.filter((l) => l.originalInstrId ?? l.originalEndToEndId ?? l.originalTxId ?? l.originalUetr);
  const fileKey = statusReportKeyOf(file.contentHash);
  const written = writePacs002({
    messageId: `STS${file.contentHash.slice(0, 32)}`,
    creationDateTime: file.createdAt.toISOString().replace(/\.\d+Z$/, "Z"),
    originalMessageId: header.values.MsgId ?? "NOTPROVIDED",
    originalMessageNameId: header.message.id,
    groupStatus: groupStatusOf(lines),
    ...(header.values.InstdAgtBIC ? { instructingAgentBic: header.values.InstdAgtBIC } : {}),
    ...(header.values.InstgAgtBIC ? { instructedAgentBic: header.values.InstgAgtBIC } : {}),
    transactions,
  });
  // Every line names a reference read from the file and a reason from our table: a refusal is our bug.
  assert(written.ok, `the status report of file ${file.fileId} is written: ${written.ok ? "" : written.error.map((f) => f.message).join("; ")}`);
  const stored = { tenantId: file.tenantId, partnerId: file.partnerId, fileKey, kind: "pacs.002", fileName: `pacs002-${file.contentHash.slice(0, 16)}.xml`, content: Buffer.from(written.value, "utf8") } as const;
  if (!(await storeOutboundFile(tx, stored))) return false;
  await announceOutboundFile(tx, stored);
  return true;
}
