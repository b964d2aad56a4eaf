import type { Tx } from "../db/transaction.ts";
import { finding } from "../errors/finding.ts";
import type { Announcement } from "../partners/outbound/announce.ts";

/**
 * Says on the file, once, in the transaction that decided it, that what it would have told its
 * partner (`what`: "rejection report", "pacs.002 status report") was not sent, and why: a
 * warning of the file's report (`clearline file show`), never a retry or a log line per attempt.
 */
export async function noteReportNotSent(
  tx: Tx, file: { tenantId: string; fileId: string }, what: string, announcement: Announcement | undefined,
): Promise<void> {
  if (announcement === undefined || announcement.queued) return;
  const message = `no ${what} was sent to partner ${announcement.partnerName}: ${announcement.reason}`;
  const warning = finding("PARTNER_REPORT_NOT_SENT", message, {}, { severity: "warning" });
  await tx.query(
    `UPDATE received_file SET findings = findings || $3::jsonb WHERE tenant_id = $1
       AND file_id = $2`,
    [file.tenantId, file.fileId, JSON.stringify([warning])],
  );
}
