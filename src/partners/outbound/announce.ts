import type { Tx } from "../../db/transaction.ts";
import { enqueueOutbox } from "../../outbox/outbox-store.ts";
import { partnerDestination, type OutboundFile } from "./outbound-store.ts";

/** What an outbox row for a partner file carries: the file's key; the deliverer reads the bytes. */
export interface PartnerFilePayload {
  partnerId: string;
  fileKey: string;
  fileName: string;
}

/**
 * Tells the outbox, in the transaction that stored the file, that it must reach the partner. The
 * message key is the file's key, derived from the decision: a retry sends the same name and bytes.
 */
export async function announceOutboundFile(tx: Tx, file: Omit<OutboundFile, "content">): Promise<void> {
  const payload: PartnerFilePayload = { partnerId: file.partnerId, fileKey: file.fileKey, fileName: file.fileName };
  await enqueueOutbox(tx, { tenantId: file.tenantId, destination: partnerDestination(file.partnerId), messageType: file.kind, messageKey: file.fileKey, payload });
}
