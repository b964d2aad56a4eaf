import { assert } from "../../assert.ts";
import type { Queryable } from "../../db/pool.ts";
import { OutboxPermanentError } from "../../outbox/deliverer.ts";
import type { PartnerFilePayload } from "./announce.ts";
import { outboundFile, partnerDestination, type OutboundFile } from "./outbound-store.ts";

/** What the partner deliverers read of an outbox message (the outbox's message carries at least this). */
export interface PartnerFileMessage {
  tenantId: string;
  destination: string;
  messageKey: string;
  payload: unknown;
}

/** A delivery no retry can fix: the outbox dead-letters it at once, for an operator to look at. */
export class PartnerDeliveryError extends OutboxPermanentError {
  constructor(code: "PARTNER_DELIVERY_FILE_MISSING" | "PARTNER_DELIVERY_HOST_KEY_MISMATCH", message: string) {
    super(code, message);
    this.name = "PartnerDeliveryError";
  }
}

function isPayload(value: unknown): value is PartnerFilePayload {
  const v = value as Partial<PartnerFilePayload> | null;
  return typeof v === "object" && v !== null && typeof v.partnerId === "string" && typeof v.fileKey === "string" && typeof v.fileName === "string";
}

/** The stored file a partner message names. A message naming no stored file is permanent: retrying cannot help. */
export async function fileOfMessage(db: Queryable, partnerId: string, message: PartnerFileMessage): Promise<OutboundFile> {
  assert(message.destination === partnerDestination(partnerId), `message ${message.messageKey} is for ${partnerId}`);
  const payload = message.payload;
  if (!isPayload(payload) || payload.partnerId !== partnerId) {
    throw new PartnerDeliveryError("PARTNER_DELIVERY_FILE_MISSING", `message ${message.messageKey} does not name a file of partner ${partnerId}`);
  }
  const file = await outboundFile(db, message.tenantId, partnerId, payload.fileKey);
  if (!file) throw new PartnerDeliveryError("PARTNER_DELIVERY_FILE_MISSING", `no stored file ${payload.fileKey} for partner ${partnerId}`);
  return file;
}
