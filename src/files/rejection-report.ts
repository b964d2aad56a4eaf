import type { Tx } from "../db/transaction.ts";
import type { Finding } from "../errors/finding.ts";
import { announceOutboundFile, type Announcement } from "../partners/outbound/announce.ts";
import { storeOutboundFile } from "../partners/outbound/outbound-store.ts";

/** The key of the report that tells a partner its file was refused at receipt: one per received file. */
export function rejectionReportKeyOf(fileId: string): string {
  return `${fileId}:rejection`;
}

/**
 * Tells the partner that a file was refused as a whole (structure, controls, counts: nothing of it
 * applied), in the transaction that marks it rejected: a JSON report naming the file and each
 * finding with its code, severity, message and position (line, or xmlPath, and field). Undefined
 * when it was stored before; else whether it was queued for the partner (announceOutboundFile).
 */
export async function reportFileRejection(
  tx: Tx, file: { tenantId: string; fileId: string; partnerId: string; originalName: string; findings: readonly Finding[] },
): Promise<Announcement | undefined> {
  const report = {
    file: file.originalName,
    file_id: file.fileId,
    status: "rejected",
    applied: 0,
    findings: file.findings.map((f) => ({ code: f.code, severity: f.severity, message: f.message, ...f.position })),
  };
  const stored = {
    tenantId: file.tenantId, partnerId: file.partnerId, fileKey: rejectionReportKeyOf(file.fileId), kind: "file.rejection-report",
    fileName: `rejected-${file.fileId}.json`, content: Buffer.from(`${JSON.stringify(report, null, 2)}\n`, "utf8"),
  } as const;
  if (!(await storeOutboundFile(tx, stored))) return undefined;
  return announceOutboundFile(tx, stored);
}
