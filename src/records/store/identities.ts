/** Payment identities (record_identity): the first record of each end-to-end reference, across channels. */
import type { Queryable } from "../../db/pool.ts";
import type { KeyState } from "../record-states.ts";

const column = <T, R>(rows: readonly T[], pick: (row: T) => R): R[] => rows.map(pick);

export interface IdentityRow { identityKey: string; naturalKey: string; channel: string; fingerprint: string; transferKey: string | null }

/** Claims payment identities; returns those this statement inserted (the first claim wins). */
export async function claimIdentities(tx: Queryable, tenantId: string, rows: readonly IdentityRow[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const { rows: inserted } = await tx.query<{ identity_key: string }>(
    `INSERT INTO record_identity (tenant_id, identity_key, natural_key, channel, fingerprint, transfer_key)
     SELECT $1, i.identity_key, i.natural_key, i.channel, i.fingerprint, i.transfer_key
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS i(identity_key, natural_key, channel, fingerprint, transfer_key)
     ON CONFLICT (tenant_id, identity_key) DO NOTHING
     RETURNING identity_key`,
    [tenantId, column(rows, (r) => r.identityKey), column(rows, (r) => r.naturalKey), column(rows, (r) => r.channel), column(rows, (r) => r.fingerprint), column(rows, (r) => r.transferKey)],
  );
  return new Set(inserted.map((r) => r.identity_key));
}

/** The first record of each identity, with where its key stands now (a first arrival that was not applied links nothing). */
export async function selectIdentities(tx: Queryable, tenantId: string, identityKeys: readonly string[]): Promise<Map<string, IdentityRow & { state: KeyState; position: string }>> {
  const { rows } = await tx.query<{ identity_key: string; natural_key: string; channel: string; fingerprint: string; transfer_key: string | null; state: KeyState; position: string }>(
    `SELECT i.identity_key, i.natural_key, i.channel, i.fingerprint, k.transfer_key, k.state, k.position
       FROM record_identity i JOIN ingest_record_key k ON k.tenant_id = i.tenant_id AND k.natural_key = i.natural_key
      WHERE i.tenant_id = $1 AND i.identity_key = ANY($2::text[])`,
    [tenantId, [...new Set(identityKeys)]],
  );
  return new Map(rows.map((r) => [r.identity_key, {
    identityKey: r.identity_key, naturalKey: r.natural_key, channel: r.channel, fingerprint: r.fingerprint, transferKey: r.transfer_key, state: r.state, position: r.position,
  }]));
}

