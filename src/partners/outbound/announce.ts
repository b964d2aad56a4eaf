import { currentConfig } from "../../config/config.ts";
import type { PartnerOutboundSetting } from "../../config/partner-outbound-config.ts";
import type { Queryable } from "../../db/pool.ts";
import type { Tx } from "../../db/transaction.ts";
import { enqueueOutbox } from "../../outbox/outbox-store.ts";
import { findTenant } from "../../tenants/tenants.ts";
import { findPartner } from "../partners.ts";
import { partnerDestination, type OutboundFile } from "./outbound-store.ts";

/** What an outbox row for a partner file carries: the file's key; the deliverer reads the bytes. */
export interface PartnerFilePayload {
  partnerId: string;
  fileKey: string;
  fileName: string;
}

/** Whether a stored file was queued for its partner, and why not. */
export type Announcement = { queued: true } | { queued: false; partnerName: string; reason: string };

/**
 * Tells the outbox, in the transaction that stored the file, that it must reach the partner. The
 * message key is the file's key, derived from the decision: a retry sends the same name and bytes.
 * A partner that no partnerOutbound entry of this process's configuration names has nowhere to
 * receive it: nothing is queued (a row no relay can deliver would be retried, warned about and
 * counted as lag until it died) and the caller is told why, to say so where the file is reported.
 */
export async function announceOutboundFile(
  tx: Tx, file: Omit<OutboundFile, "content">, settings: readonly PartnerOutboundSetting[] = currentConfig().ingest.partnerOutbound,
): Promise<Announcement> {
  const nowhere = await undeliverable(tx, file.tenantId, file.partnerId, settings);
  if (nowhere !== undefined) return { queued: false, ...nowhere };
  const payload: PartnerFilePayload = { partnerId: file.partnerId, fileKey: file.fileKey, fileName: file.fileName };
  await enqueueOutbox(tx, { tenantId: file.tenantId, destination: partnerDestination(file.partnerId), messageType: file.kind, messageKey: file.fileKey, payload });
  return { queued: true };
}

/**
 * Why the partner's files cannot be delivered under `settings`, or undefined when an entry names
 * the partner (entries name tenant and partner by name or id, as `serve` reads them).
 */
async function undeliverable(
  db: Queryable, tenantId: string, partnerId: string, settings: readonly PartnerOutboundSetting[],
): Promise<{ partnerName: string; reason: string } | undefined> {
  const partner = await findPartner(db, tenantId, partnerId);
  if (settings.length > 0) {
    const tenant = await findTenant(db, tenantId);
    const named = (given: string, id: string, name: string | undefined) => given === id || given === name;
    if (settings.some((s) => named(s.tenant, tenantId, tenant?.name) && named(s.partner, partnerId, partner?.name))) return undefined;
  }
  const reason = "it has nowhere to receive files: no partnerOutbound entry (an outbound folder, or sftp: true)"
    + " names it in the configuration; the file is kept, not queued";
  return { partnerName: partner?.name ?? partnerId, reason };
}
