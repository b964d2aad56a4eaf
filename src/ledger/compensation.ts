import { assert } from "../assert.ts";
import type { Queryable } from "../db/pool.ts";
import { compensationFor } from "../normalize/posting-rules.ts";
import { storedTransfers } from "./stored-transfers.ts";
import { entryKeyOf, type Leg, type Transfer } from "./transfer.ts";

/**
 * The compensations of stored transfers, read in one round trip: for each, compensationFor
 * (normalize/posting-rules.ts) of its legs as stored — every leg mirrored, keyed
 * `<transfer key>:compensate` (the one key rule a review's replace and an incident share, so a
 * transfer is compensated once), shown in statements as a technical correction. A key with no
 * stored transfer has no compensation (left out of the map).
 */
export async function compensationsOf(db: Queryable, tenantId: string, transferKeys: readonly string[], sourceRef: string): Promise<Map<string, Transfer>> {
  const stored = await storedTransfers(db, tenantId, [...transferKeys]);
  const compensations = new Map<string, Transfer>();
  for (const [transferKey, transfer] of stored) {
    const legs: Leg[] = [...Array(transfer.entries.size).keys()].map((index) => {
      const entry = transfer.entries.get(entryKeyOf(transferKey, index));
      assert(entry, `transfer ${transferKey} has entry ${index}`);
      return { accountId: entry.account_id, direction: entry.direction as Leg["direction"], amountMinor: BigInt(entry.amount_minor), currency: entry.currency };
    });
    const original = {
      tenantId, transferKey, valueDate: transfer.valueDate, settlementDate: transfer.settlementDate,
      legs,
    };
    compensations.set(transferKey, compensationFor(original, sourceRef));
  }
  return compensations;
}

/** A compensation as the ledger links it: what it reverses, what takes its place, why, who. */
export interface CompensationLink {
  compensationKey: string;         // '<compensated key>:compensate'
  compensatedKey: string;
  correctedKey: string | null;     // the posting that takes the compensated one's place
  reason: string;                  // review_replace, incident
  decidedBy: string;               // 'review:<review id>', 'incident:<incident id>'
}

/**
 * Links compensations to the transfers they compensate (docs/decisions/0011), in the
 * transaction that posts them; a transfer is compensated at most once (the table's unique key).
 */
export async function linkCompensations(
  tx: Queryable, tenantId: string, links: readonly CompensationLink[],
): Promise<void> {
  if (links.length === 0) return;
  await tx.query(
    `INSERT INTO compensation
       (tenant_id, compensation_key, compensated_key, corrected_key, reason, decided_by)
     SELECT $1, c.compensation_key, c.compensated_key, c.corrected_key, c.reason, c.decided_by
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
         AS c(compensation_key, compensated_key, corrected_key, reason, decided_by)`,
    [tenantId, links.map((l) => l.compensationKey), links.map((l) => l.compensatedKey),
      links.map((l) => l.correctedKey), links.map((l) => l.reason), links.map((l) => l.decidedBy)],
  );
}
