import type { Pool } from "../../db/pool.ts";
import { finding, type Finding } from "../../errors/finding.ts";
import { findPartner } from "../partners.ts";
import type { SftpPartnerSource } from "../../config/sources-config.ts";
import type { OutboxDeliverer } from "../../outbox/deliverer.ts";
import { findTenant } from "../../tenants/tenants.ts";
import { PartnerFolderDeliverer } from "./folder-deliverer.ts";
import type { PartnerOutboundSetting } from "../../config/partner-outbound-config.ts";
import { PartnerSftpDeliverer } from "./sftp-deliverer.ts";

/** The deliverers of the configured partners, for the outbox relay; an unknown tenant or partner is a configuration error. */
export async function partnerDeliverers(pool: Pool, settings: readonly PartnerOutboundSetting[], sftpPartners: readonly SftpPartnerSource[]): Promise<{ deliverers: OutboxDeliverer[]; errors: Finding[] }> {
  const deliverers: OutboxDeliverer[] = [];
  const errors: Finding[] = [];
  for (const setting of settings) {
    const tenant = await findTenant(pool, setting.tenant);
    const partner = tenant ? await findPartner(pool, tenant.tenantId, setting.partner) : undefined;
    if (!partner) {
      errors.push(finding("PARTNER_NOT_FOUND", `partnerOutbound: no partner ${setting.partner} in tenant ${setting.tenant}`, { field: "partnerOutbound" }));
      continue;
    }
    if ("folder" in setting) {
      deliverers.push(new PartnerFolderDeliverer(pool, { partnerId: partner.partnerId, folder: setting.folder }));
      continue;
    }
    const source = sftpPartners.find((s) => s.tenant === setting.tenant && s.partner === setting.partner);
    if (!source) continue;   // checked when the settings were read
    deliverers.push(new PartnerSftpDeliverer(pool, {
      partnerId: partner.partnerId, host: source.host, port: source.port, username: source.username,
      privateKeyPath: source.privateKeyPath, hostKeySha256: source.hostKeySha256, outbox: setting.sftpOutbox,
    }));
  }
  return { deliverers, errors };
}
