import path from "node:path";
import { finding, type Finding } from "../errors/finding.ts";

/**
 * Where a partner's files go (config file `partnerOutbound`): a local outbound folder, or the
 * `outbox` folder of the SFTP server its files come from (the `sftpPartners` entry of the same
 * tenant and partner supplies host, user, key and host key). One channel per partner. Read with
 * the rest of the configuration (src/config/sources-config.ts calls it with the SFTP partners it read).
 */
export type PartnerOutboundSetting =
  | { tenant: string; partner: string; folder: string }
  | { tenant: string; partner: string; sftpOutbox: string };

type Source = Record<string, unknown>;

const text = (value: unknown): value is string => typeof value === "string" && value.length > 0;

export function partnerOutboundSettings(file: Source, home: string, sftpPartners: ReadonlyArray<{ tenant: string; partner: string }>, errors: Finding[]): PartnerOutboundSetting[] {
  const raw = file.partnerOutbound;
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) {
    errors.push(finding("CONFIG_INVALID", "partnerOutbound must be a list", { field: "partnerOutbound" }));
    return [];
  }
  const settings: PartnerOutboundSetting[] = [];
  for (const [index, entry] of (raw as Source[]).entries()) {
    const where = `partnerOutbound[${index}]`;
    if (!text(entry?.tenant) || !text(entry.partner) || text(entry.folder) === (entry.sftp === true)) {
      errors.push(finding("CONFIG_INVALID", `${where} needs tenant, partner and either folder or sftp: true`, { field: where }));
      continue;
    }
    if (text(entry.folder)) {
      settings.push({ tenant: entry.tenant, partner: entry.partner, folder: path.resolve(home, entry.folder) });
      continue;
    }
    if (!sftpPartners.some((s) => s.tenant === entry.tenant && s.partner === entry.partner)) {
      errors.push(finding("CONFIG_INVALID", `${where}: sftp: true needs an sftpPartners entry for tenant ${entry.tenant} and partner ${entry.partner}`, { field: where }));
      continue;
    }
    settings.push({ tenant: entry.tenant, partner: entry.partner, sftpOutbox: text(entry.outbox) ? entry.outbox : "outbox" });
  }
  return settings;
}
