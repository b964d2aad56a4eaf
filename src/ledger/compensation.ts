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
    compensations.set(transferKey, compensationFor({ tenantId, transferKey, valueDate: transfer.valueDate, legs }, sourceRef));
  }
  return compensations;
}
