import type { Queryable } from "../../db/pool.ts";
import type { Tx } from "../../db/transaction.ts";

/** The kinds of file clearline sends a partner. */
export type OutboundKind = "pacs.002" | "ach.return-file" | "file.rejection-report";

export interface OutboundFile {
  tenantId: string;
  partnerId: string;
  fileKey: string;      // derived from the decision; the outbox message's key
  kind: OutboundKind;
  fileName: string;
  content: Buffer;
}

/** The outbox destination of a partner's files. */
export function partnerDestination(partnerId: string): string {
  return `partner:${partnerId}`;
}

/**
 * Stores a file for a partner inside the transaction of the decision it tells about. The same key
 * stored twice is one file (the first): a replayed decision sends nothing new. True when stored now.
 */
export async function storeOutboundFile(tx: Tx, file: OutboundFile): Promise<boolean> {
  const inserted = await tx.query(
    `INSERT INTO partner_outbound_file (tenant_id, partner_id, file_key, kind, file_name, content)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
    [file.tenantId, file.partnerId, file.fileKey, file.kind, file.fileName, file.content],
  );
  return inserted.rowCount === 1;
}

export async function outboundFile(db: Queryable, tenantId: string, partnerId: string, fileKey: string): Promise<OutboundFile | undefined> {
  const { rows } = await db.query<{ kind: OutboundKind; file_name: string; content: Buffer }>(
    "SELECT kind, file_name, content FROM partner_outbound_file WHERE tenant_id = $1 AND partner_id = $2 AND file_key = $3",
    [tenantId, partnerId, fileKey],
  );
  const row = rows[0];
  return row ? { tenantId, partnerId, fileKey, kind: row.kind, fileName: row.file_name, content: row.content } : undefined;
}

/** A partner's files, newest first (bounded by rowsMax). */
export async function outboundFiles(db: Queryable, tenantId: string, partnerId: string, rowsMax: number): Promise<OutboundFile[]> {
  const { rows } = await db.query<{ file_key: string; kind: OutboundKind; file_name: string; content: Buffer }>(
    `SELECT file_key, kind, file_name, content FROM partner_outbound_file WHERE tenant_id = $1 AND partner_id = $2
      ORDER BY created_at DESC, file_key LIMIT $3`,
    [tenantId, partnerId, rowsMax],
  );
  return rows.map((r) => ({ tenantId, partnerId, fileKey: r.file_key, kind: r.kind, fileName: r.file_name, content: r.content }));
}
