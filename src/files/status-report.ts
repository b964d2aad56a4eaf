import { assert } from "../assert.ts";
import { limits } from "../config/limits.ts";
import type { Tx } from "../db/transaction.ts";
import { storedContent } from "./receipt.ts";
import { fileOutcomes, paymentStatesByLinkId } from "./report.ts";
import { readIso20022 } from "../protocols/iso20022/reader.ts";
import { writePacs002, type TransactionStatus } from "../protocols/iso20022/pacs002-writer.ts";
import { groupStatusOf, requestedStatusOf, transactionStatusOf } from "../protocols/iso20022/status-reasons.ts";
import type { Iso20022Header } from "../protocols/iso20022/types.ts";
import { announceOutboundFile, type Announcement } from "../partners/outbound/announce.ts";
import { storeOutboundFile } from "../partners/outbound/outbound-store.ts";

/** Payment instructions answered with their status; status requests answered with the status they ask for. */
const instructionFamilies = new Set(["pacs.008", "pain.001"]);
const requestFamily = "pacs.028";

const uetrPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

type References = Pick<TransactionStatus, "originalInstrId" | "originalEndToEndId" | "originalTxId" | "originalUetr">;

/** The key of a file's status report: the same content received again is answered by the same report. */
export function statusReportKeyOf(contentHash: string): string {
  return `${contentHash}:status`;
}

interface StoredMessage {
  header?: Iso20022Header;
  transactions: Map<number, Record<string, string>>;   // 1-based transaction index -> mapped values
}

/** The received message's header and each transaction's values, read back from the stored file (bounded). */
async function storedMessage(tx: Tx, tenantId: string, fileId: string): Promise<StoredMessage> {
  const message: StoredMessage = { transactions: new Map() };
  let index = 0;
  for await (const event of readIso20022(storedContent(tx, tenantId, fileId))) {
    if (event.type === "header") message.header = event.header;
    if (event.type !== "transaction") continue;
    index++;
    if (index <= limits.partners.statusTransactionsMax) message.transactions.set(index, event.transaction.values);
  }
  return message;
}

/** References of one transaction, taken from fields named with `prefix` ("" for an instruction, "Orgnl" for a request). */
function referencesOf(values: Record<string, string>, prefix: "" | "Orgnl"): References {
  const references: References = {};
  const instrId = values[`${prefix}InstrId`];
  const endToEndId = values[`${prefix}EndToEndId`];
  const txId = values[`${prefix}TxId`];
  const uetr = values[`${prefix}UETR`];
  if (instrId) references.originalInstrId = instrId;
  if (endToEndId) references.originalEndToEndId = endToEndId;
  if (txId) references.originalTxId = txId;
  // An invalid UETR (the reason a line may be rejected) is not echoed: our own reader would refuse the report.
  if (uetr && uetrPattern.test(uetr)) references.originalUetr = uetr;
  return references;
}

/** Lines of an instruction's report: each transaction's own outcome. */
async function instructionLines(tx: Tx, file: { tenantId: string; fileId: string }, message: StoredMessage): Promise<TransactionStatus[]> {
  const outcomes = await fileOutcomes(tx, file.tenantId, file.fileId, limits.partners.statusTransactionsMax);
  return outcomes.map((outcome) => {
    const values = message.transactions.get(outcome.index);
    assert(values !== undefined, `transaction ${outcome.index} of file ${file.fileId} was read back`);
    return { ...referencesOf(values, ""), ...transactionStatusOf(outcome.outcome, outcome.code, outcome.detail) };
  });
}

/**
 * Lines of a status request's answer: the recorded state of each payment it names, found by its
 * UETR when that finds one, else by its end-to-end reference.
 */
async function requestedLines(tx: Tx, tenantId: string, message: StoredMessage): Promise<TransactionStatus[]> {
  const requests = [...message.transactions.values()].map((values) => referencesOf(values, "Orgnl"));
  const linksOf = (r: References) => [r.originalUetr ? `uetr:${r.originalUetr}` : undefined, r.originalEndToEndId ? `e2e:${r.originalEndToEndId}` : undefined].filter((l): l is string => l !== undefined);
  const states = await paymentStatesByLinkId(tx, tenantId, requests.flatMap(linksOf));
  return requests.map((references) => {
    const payment = linksOf(references).map((link) => states.get(link)).find((state) => state !== undefined);
    return { ...references, ...requestedStatusOf(payment) };
  });
}

/**
 * Writes the pacs.002 that answers a finished file and stores it for the partner, in the
 * transaction that marks the file done (docs/decisions/0025): a pacs.008 or pain.001 gets one line
 * per transaction from its outcome; a pacs.028 one line per payment it asks about, from that
 * payment's recorded state. ACSC, ACCP or RJCT with its ISO reason (protocols/iso20022/
 * status-reasons.json), and the group status. Other messages are not answered. Undefined when nothing
 * was stored now; else whether it was queued for the partner (announceOutboundFile).
 */
export async function reportFileStatus(
  tx: Tx, file: { tenantId: string; fileId: string; partnerId: string; contentHash: string; createdAt: Date },
): Promise<Announcement | undefined> {
  const message = await storedMessage(tx, file.tenantId, file.fileId);
  const header = message.header;
  const family = header?.message.family ?? "";
  if (!header || !(instructionFamilies.has(family) || family === requestFamily)) return undefined;
  const lines = family === requestFamily ? await requestedLines(tx, file.tenantId, message) : await instructionLines(tx, file, message);
  // A transaction without any reference cannot be named on a line; it still counts in the group status.
  const transactions = lines.filter((l) => l.originalInstrId ?? l.originalEndToEndId ?? l.originalTxId ?? l.originalUetr);
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
  const stored = { tenantId: file.tenantId, partnerId: file.partnerId, fileKey: statusReportKeyOf(file.contentHash), kind: "pacs.002", fileName: `pacs002-${file.contentHash.slice(0, 16)}.xml`, content: Buffer.from(written.value, "utf8") } as const;
  if (!(await storeOutboundFile(tx, stored))) return undefined;
  return announceOutboundFile(tx, stored);
}
