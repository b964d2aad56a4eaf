/** Payment identities (record_identity): the first record of each end-to-end reference, across channels (claimed with its key: keys.ts). */
import type { Queryable } from "../../db/pool.ts";
import { storedChannel, type Channel } from "../../normalize/canonical-record.ts";
import type { KeyState } from "../record-states.ts";

export interface IdentityRow {
  identityKey: string; naturalKey: string; channel: Channel; fingerprint: string;
  transferKey: string | null;
}

/** The first record of each identity, with where its key stands now (a first arrival that was not applied links nothing). */
export async function selectIdentities(tx: Queryable, tenantId: string, identityKeys: readonly string[]): Promise<Map<string, IdentityRow & { state: KeyState; position: string }>> {
  const { rows } = await tx.query<{ identity_key: string; natural_key: string; channel: string; fingerprint: string; transfer_key: string | null; state: KeyState; position: string }>(
    `SELECT i.identity_key, i.natural_key, i.channel, i.fingerprint, k.transfer_key, k.state, k.position
       FROM record_identity i JOIN record_key k ON k.tenant_id = i.tenant_id
         AND k.natural_key = i.natural_key
      WHERE i.tenant_id = $1 AND i.identity_key = ANY($2::text[])`,
    [tenantId, [...new Set(identityKeys)]],
  );
  return new Map(rows.map((r) => [r.identity_key, {
    identityKey: r.identity_key, naturalKey: r.natural_key, channel: storedChannel(r.channel),
    fingerprint: r.fingerprint, transferKey: r.transfer_key, state: r.state, position: r.position,
  }]));
}

