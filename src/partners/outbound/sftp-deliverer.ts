import { readFile } from "node:fs/promises";
import path from "node:path";
import SftpClient from "ssh2-sftp-client";
import { limits } from "../../config/limits.ts";
import type { Pool } from "../../db/pool.ts";
import type { OutboxDeliverer } from "../../outbox/deliverer.ts";
import { hostKeyFingerprint } from "../../config/sources-config.ts";
import { partnerDestination } from "./outbound-store.ts";
import { fileOfMessage, PartnerDeliveryError, type PartnerFileMessage } from "./partner-file-message.ts";

/** A partner's SFTP server, as its inbound source is configured, and the folder files go to. */
export interface PartnerSftpTarget {
  partnerId: string;
  host: string;
  port: number;
  username: string;
  privateKeyPath: string;
  hostKeySha256: string;   // checked before any credential is sent, as the poller does
  outbox: string;          // remote folder, "outbox" by default
}

/**
 * Delivers a partner's files to the `outbox` folder of its SFTP server: uploaded under a temporary
 * name, then renamed. A file already there under its final name with the same size was delivered
 * by an earlier attempt that died before it was marked: nothing is sent again. One connection per
 * delivery, bounded by sftpDeliveryTimeoutMs, always ended.
 */
export class PartnerSftpDeliverer implements OutboxDeliverer {
  constructor(private readonly pool: Pool, private readonly target: PartnerSftpTarget) {}

  canDeliver(destination: string): boolean {
    return destination === partnerDestination(this.target.partnerId);
  }

  async deliver(message: PartnerFileMessage, signal: AbortSignal): Promise<void> {
    const file = await fileOfMessage(this.pool, this.target.partnerId, message);
    const client = new SftpClient(`clearline-outbox-${this.target.partnerId}`);
    const abort = () => void client.end().catch(() => undefined);
    signal.addEventListener("abort", abort, { once: true });
    const deadline = setTimeout(abort, limits.partners.sftpDeliveryTimeoutMs);
    try {
      await this.connect(client);
      const final = path.posix.join(this.target.outbox, file.fileName);
      const present = await client.exists(final);
      if (present === "-" && (await client.stat(final)).size === file.content.length) return;
      const temporary = `${final}.part`;
      await client.put(file.content, temporary);
      if (present === "-") await client.delete(final);
      await client.rename(temporary, final);
    } finally {
      clearTimeout(deadline);
      signal.removeEventListener("abort", abort);
      await client.end().catch(() => undefined);
    }
  }

  private async connect(client: SftpClient): Promise<void> {
    const { host, port, username, hostKeySha256 } = this.target;
    let presented: string | undefined;
    try {
      await client.connect({
        host, port, username, privateKey: await readFile(this.target.privateKeyPath),
        readyTimeout: limits.partners.sftpDeliveryTimeoutMs, timeout: limits.partners.sftpDeliveryTimeoutMs, retries: 0,
        hostVerifier: (key: Buffer) => {
          const fingerprint = hostKeyFingerprint(key);
          if (fingerprint === hostKeySha256) return true;
          presented = fingerprint;
          return false;
        },
      });
    } catch (error) {
      if (presented !== undefined) throw new PartnerDeliveryError("PARTNER_DELIVERY_HOST_KEY_MISMATCH", `partner ${this.target.partnerId}: the SFTP server presented host key ${presented}, not the configured one`);
      throw error;
    }
  }
}
