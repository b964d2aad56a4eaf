import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { limits } from "../config/limits.ts";

/**
 * The bytes of a statement to import, read as a stream (docs/decisions/0040): a file on disk is
 * never held whole. Its size is known before anything is read, so a file over the bound is
 * refused at once; each call of `chunks` reads it again from the start (an import reads it twice:
 * once for its SHA-256 identity, once for its items).
 */
export interface StatementSource {
  byteLength: number;
  chunks(): AsyncIterable<Buffer>;
}

/** A statement already in memory (an HTTP body under its size bound, a test's bytes), handed on in chunks. */
export function bufferSource(content: Buffer, chunkBytes: number = limits.recon.readChunkBytes): StatementSource {
  return {
    byteLength: content.length,
    async *chunks() {
      for (let start = 0; start < content.length; start += chunkBytes) yield content.subarray(start, start + chunkBytes);
    },
  };
}

/** A statement file, read limits.recon.readChunkBytes at a time. */
export async function fileSource(path: string): Promise<StatementSource> {
  const { size } = await stat(path);
  return {
    byteLength: size,
    chunks: () => createReadStream(path, { highWaterMark: limits.recon.readChunkBytes }) as AsyncIterable<Buffer>,
  };
}
