import { mkdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Pool } from "../../db/pool.ts";
import type { OutboxDeliverer } from "../../outbox/deliverer.ts";
import { partnerDestination } from "./outbound-store.ts";
import { fileOfMessage, type PartnerFileMessage } from "./partner-file-message.ts";

export interface PartnerFolderTarget {
  partnerId: string;
  folder: string;          // absolute: the partner's outbound folder on this machine
}

/**
 * Delivers a partner's files to its local outbound folder: written under a temporary name (which
 * folder watchers skip), flushed, then renamed, so the partner never reads half a file. A retry
 * writes the same name with the same bytes: the partner sees one file per key.
 */
export class PartnerFolderDeliverer implements OutboxDeliverer {
  constructor(private readonly pool: Pool, private readonly target: PartnerFolderTarget) {}

  canDeliver(destination: string): boolean {
    return destination === partnerDestination(this.target.partnerId);
  }

  async deliver(message: PartnerFileMessage, signal: AbortSignal): Promise<void> {
    const file = await fileOfMessage(this.pool, this.target.partnerId, message);
    signal.throwIfAborted();
    await mkdir(this.target.folder, { recursive: true });
    const final = path.join(this.target.folder, file.fileName);
    const temporary = `${final}.part`;
    await writeFile(temporary, file.content, { signal, flush: true });
    await rename(temporary, final);
  }
}
