import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { currentConfig, setProcessConfig } from "../../src/config/config.ts";
import type { PartnerOutboundSetting } from "../../src/config/partner-outbound-config.ts";
import type { Pool } from "../../src/db/pool.ts";
import type { OutboxMessage } from "../../src/outbox/deliverer.ts";
import { givenScene, type Scene } from "../files/support.ts";
import {
  newKeyPair, startSftpServer, type KeyPair, type TestSftpServer,
} from "../support/sftp-server.ts";

/** The outbox rows for one destination of a tenant, as the relay hands them to a deliverer. */
export async function outboxMessages(pool: Pool, tenantId: string, destination: string): Promise<OutboxMessage[]> {
  const { rows } = await pool.query<{ id: string; message_type: string; message_key: string; payload: unknown; attempts: number; created_at: Date }>(
    `SELECT id::text, message_type, message_key, payload, attempts, created_at FROM outbox_message
      WHERE tenant_id = $1 AND destination = $2 ORDER BY id`, [tenantId, destination]);
  return rows.map((r) => ({ tenantId, id: r.id, destination, messageType: r.message_type, messageKey: r.message_key, payload: r.payload, attempts: r.attempts + 1, createdAt: r.created_at }));
}

/** A real SFTP server standing for the partner's host: a root with inbox, archive and outbox, and our key pair on file. */
export interface PartnerSftp {
  root: string;
  server: TestSftpServer;
  userKey: KeyPair;
  keyFile: string;
}

/** Starts the partner's SFTP server over a new temporary root; `label` names the temporary folders. */
export async function startPartnerSftp(label: string): Promise<PartnerSftp> {
  const root = mkdtempSync(path.join(tmpdir(), `clearline-${label}-sftp-`));
  for (const folder of ["inbox", "archive", "outbox"]) mkdirSync(path.join(root, folder));
  const userKey = newKeyPair();
  const keyFile = path.join(mkdtempSync(path.join(tmpdir(), `clearline-${label}-key-`)), "id_ecdsa");
  writeFileSync(keyFile, userKey.private, { mode: 0o600 });
  const server = await startSftpServer(root, { name: "clearline", publicKey: userKey.public });
  return { root, server, userKey, keyFile };
}

/**
 * This process's partnerOutbound (the config file's entries), as a service configured so would
 * have them: a partner's reports are queued only when an entry names it (docs/decisions/0025).
 */
export function withPartnerOutbound(settings: PartnerOutboundSetting[]): void {
  const config = currentConfig();
  setProcessConfig({ ...config, ingest: { ...config.ingest, partnerOutbound: settings } });
}

/** givenScene whose partner an entry of this process's partnerOutbound names: its reports are queued. */
export async function givenDeliverableScene(pool: Pool, name: string): Promise<Scene> {
  const scene = await givenScene(pool, name);
  withPartnerOutbound([...currentConfig().ingest.partnerOutbound, { tenant: name, partner: scene.partner.name, folder: `/outbound/${name}` }]);
  return scene;
}
