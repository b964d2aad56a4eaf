import { createHash, randomBytes } from "node:crypto";
import path from "node:path";
import { limits } from "../config/limits.ts";
import type { Pool, Queryable } from "../db/pool.ts";
import { withTransaction, type Tx } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";

export type FileSource = "drop_folder" | "sftp" | "http" | "cli";

/** A source's lease, checked inside a receipt's transaction: throws when the lease was lost. */
export type ReceiptFence = (tx: Tx) => Promise<void>;

export interface IncomingFile {
  tenantId: string;
  partnerId: string;
  source: FileSource;
  name: string;                                        // the name it arrived with (sanitized here)
  content: Uint8Array | AsyncIterable<Uint8Array>;
  /**
   * The source's identity of this arrival (a drop folder's file: name, size, modification time,
   * inode; an SFTP file: its listing), claimed with the receipt: however many processes find the
   * file, one receipt is made (docs/decisions/0072). Absent for uploads (HTTP, CLI).
   */
  arrivalKey?: string;
  /** The source's lease, checked as the receipt's last statement: throws when it was lost. */
  fence?: ReceiptFence;
}

export interface Receipt {
  fileId: string;
  name: string;
  sizeBytes: number;
  bytesSha256: string;
  /** The arrival's key was claimed before (by this process or another): this is that receipt. */
  alreadyReceived?: boolean;
}

/**
 * A file name as it may be stored and shown: the last path component only (no directory, no
 * traversal), printable ASCII letters, digits, '.', '_' and '-' (anything else becomes '_'),
 * at most fileNameCharsMax characters. An empty name, '.' or '..' is refused.
 */
export function sanitizeFileName(raw: string): Result<string, Finding> {
  const base = path.posix.basename(raw.replace(/\\/g, "/"));
  const cleaned = base.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, limits.ingest.fileNameCharsMax);
  if (cleaned === "" || /^\.+$/.test(cleaned)) {
    const detail = `${JSON.stringify(raw.slice(0, 80))} is not a usable file name`;
    return fail(finding("FILE_NAME_INVALID", detail, { field: "name" }));
  }
  return ok(cleaned);
}

export function newFileId(): string {
  return `fil_${randomBytes(10).toString("hex")}`;
}

async function* pieces(content: Uint8Array | AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  if (content instanceof Uint8Array) yield content;
  else yield* content;
}

/**
 * Stores a file before anything reads it: the receipt row and the content (in pieces of
 * contentPieceBytes) commit together, so a file is either wholly received or not at all, and a
 * received file is never lost. Memory stays at one piece whatever the file size. A file past
 * fileBytesMax is refused and nothing is kept.
 */
export async function receiveFile(
  pool: Pool, arrival: IncomingFile, options: { fileBytesMax?: number } = {},
): Promise<Result<Receipt, Finding>> {
  const named = sanitizeFileName(arrival.name);
  if (!named.ok) return named;
  const fileBytesMax = options.fileBytesMax ?? limits.ingest.fileBytesMax;
  const fileId = newFileId();
  const tooLarge = Symbol("too large");
  try {
    return await withTransaction(pool, async (tx) => {
      const earlier = await claimArrival(tx, arrival, fileId, named.value);
      if (earlier !== undefined) {
        stopReading(arrival.content);
        return ok(earlier);
      }
      const hash = createHash("sha256");
      const pieceBytes = limits.ingest.contentPieceBytes;
      // One piece buffer for the whole file: pg copies a parameter into its wire message when the
      // query is sent, and each flush is awaited, so the buffer is free again when it returns (a
      // new buffer per piece left up to 60 MB of dead pieces waiting for the GC on a 100 MB file).
      const buffer = Buffer.allocUnsafe(pieceBytes);
      let filled = 0;
      let seq = 0;
      let size = 0;
      const flush = async () => {
        if (filled === 0) return;
        await tx.query(
          `INSERT INTO received_file_content (tenant_id, file_id, seq, bytes)
             VALUES ($1, $2, $3, $4)`,
          [arrival.tenantId, fileId, seq++, buffer.subarray(0, filled)]);
        filled = 0;
      };
      for await (const chunk of pieces(arrival.content)) {
        size += chunk.byteLength;
        if (size > fileBytesMax) throw tooLarge;
        hash.update(chunk);
        let offset = 0;
        while (offset < chunk.byteLength) {
          const n = Math.min(pieceBytes - filled, chunk.byteLength - offset);
          buffer.set(chunk.subarray(offset, offset + n), filled);
          filled += n;
          offset += n;
          if (filled === pieceBytes) await flush();
        }
      }
      await flush();
      const bytesSha256 = hash.digest("hex");
      await tx.query(
        `UPDATE received_file SET size_bytes = $3, bytes_sha256 = $4 WHERE tenant_id = $1
           AND file_id = $2`,
        [arrival.tenantId, fileId, size, bytesSha256]);
      await arrival.fence?.(tx);
      return ok({ fileId, name: named.value, sizeBytes: size, bytesSha256 });
    });
  } catch (error) {
    if (error === tooLarge) {
      const detail = `the file exceeds ${fileBytesMax} bytes; nothing was stored`;
      return fail(finding("FILE_TOO_LARGE", detail, { field: "content" }));
    }
    throw error;
  }
}

/**
 * The receipt's row, claimed under the arrival's key when it has one: the unique index makes a
 * second receipt of one arrival impossible, whichever process tries (a concurrent claim waits for
 * the first to commit or roll back). Returns the earlier receipt when the key was claimed before.
 */
async function claimArrival(
  tx: Tx, arrival: IncomingFile, fileId: string, name: string,
): Promise<Receipt | undefined> {
  const inserted = await tx.query(
    `INSERT INTO received_file (tenant_id, file_id, partner_id, source, original_name, size_bytes,
                              bytes_sha256, status, arrival_key)
     VALUES ($1, $2, $3, $4, $5, 0, '', 'received', $6)
     ON CONFLICT (tenant_id, partner_id, source, arrival_key) WHERE arrival_key IS NOT NULL
     DO NOTHING`,
    [arrival.tenantId, fileId, arrival.partnerId, arrival.source, name, arrival.arrivalKey ?? null],
  );
  if (inserted.rowCount === 1) return undefined;
  const { rows } = await tx.query<{
    file_id: string; original_name: string; size_bytes: bigint; bytes_sha256: string;
  }>(
    `SELECT file_id, original_name, size_bytes, bytes_sha256 FROM received_file
      WHERE tenant_id = $1 AND partner_id = $2 AND source = $3 AND arrival_key = $4`,
    [arrival.tenantId, arrival.partnerId, arrival.source, arrival.arrivalKey],
  );
  const row = rows[0];
  if (row === undefined) {
    const key = arrival.arrivalKey ?? "";
    throw new Error(`the arrival ${key} was claimed, and its receipt is not found`);
  }
  return {
    fileId: row.file_id, name: row.original_name, sizeBytes: Number(row.size_bytes),
    bytesSha256: row.bytes_sha256, alreadyReceived: true,
  };
}

/** An arrival's content left unread (its receipt exists): a file stream closes now, not at GC. */
function stopReading(content: IncomingFile["content"]): void {
  const destroy = (content as { destroy?: unknown }).destroy;
  if (typeof destroy === "function") (destroy as () => void).call(content);
}

/** Same as receiveFile, inside the caller's transaction (an HTTP upload claims its key and stores the file together). */
export async function receiveSmallFileInTransaction(
  tx: Tx, arrival: IncomingFile & { content: Uint8Array },
): Promise<Result<Receipt, Finding>> {
  const named = sanitizeFileName(arrival.name);
  if (!named.ok) return named;
  if (arrival.content.byteLength > limits.ingest.fileBytesMax) {
    const detail = `the file exceeds ${limits.ingest.fileBytesMax} bytes; nothing was stored`;
    return fail(finding("FILE_TOO_LARGE", detail, { field: "content" }));
  }
  const fileId = newFileId();
  const bytesSha256 = createHash("sha256").update(arrival.content).digest("hex");
  await tx.query(
    `INSERT INTO received_file (tenant_id, file_id, partner_id, source, original_name, size_bytes,
       bytes_sha256, status)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'received')`,
    [arrival.tenantId, fileId, arrival.partnerId, arrival.source, named.value, arrival.content.byteLength, bytesSha256],
  );
  const pieceBytes = limits.ingest.contentPieceBytes;
  for (let offset = 0, seq = 0; offset < arrival.content.byteLength; offset += pieceBytes, seq++) {
    await tx.query(
      `INSERT INTO received_file_content (tenant_id, file_id, seq, bytes) VALUES ($1, $2, $3, $4)`,
      [arrival.tenantId, fileId, seq, Buffer.from(arrival.content.buffer, arrival.content.byteOffset + offset, Math.min(pieceBytes, arrival.content.byteLength - offset))]);
  }
  return ok({ fileId, name: named.value, sizeBytes: arrival.content.byteLength, bytesSha256 });
}

/**
 * A stored file's content, in order, one piece read at a time and handed on in slices of
 * readSliceBytes: a reader turns each slice it is given into events at once, so the slice size
 * bounds how many records wait in memory.
 */
export async function* storedContent(db: Queryable, tenantId: string, fileId: string): AsyncGenerator<Uint8Array> {
  const slice = limits.ingest.readSliceBytes;
  for (let seq = 0; ; seq++) {
    const { rows } = await db.query<{ bytes: Buffer }>(
      `SELECT bytes FROM received_file_content WHERE tenant_id = $1 AND file_id = $2 AND seq = $3`,
      [tenantId, fileId, seq]);
    const row = rows[0];
    if (!row) return;
    for (let offset = 0; offset < row.bytes.byteLength; offset += slice) yield row.bytes.subarray(offset, offset + slice);
  }
}
