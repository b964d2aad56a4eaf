import { assert } from "../assert.ts";
import type { Queryable } from "../db/pool.ts";
import { storedTransfers } from "./stored-transfers.ts";
import { entryKeyOf, type Transfer } from "./transfer.ts";

/** The one key rule for compensations: whoever compensates a transfer (a review, an incident) uses it, so it happens once. */
export function compensationKeyOf(transferKey: string): string {
  return `${transferKey}:compensate`;
}

/**
 * The compensations of stored transfers: each the exact mirror of its original's legs (every
 * debit a credit and back, same accounts and amounts), keyed `<transfer key>:compensate`, kind
 * `compensation`, so it shows in statements as a technical correction, not a refund or a return.
 * A key with no stored transfer has no compensation (left out of the map).
 */
export async function compensationsOf(db: Queryable, tenantId: string, transferKeys: readonly string[], valueDate: string, sourceRef: string): Promise<Map<string, Transfer>> {
  const stored = await storedTransfers(db, tenantId, [...transferKeys]);
  const compensations = new Map<string, Transfer>();
  for (const [transferKey, transfer] of stored) {
    const legs = [...Array(transfer.entries.size).keys()].map((index) => {
      const entry = transfer.entries.get(entryKeyOf(transferKey, index));
      assert(entry, `transfer ${transferKey} has entry ${index}`);
      return { accountId: entry.account_id, direction: entry.direction === "D" ? "C" as const : "D" as const, amountMinor: BigInt(entry.amount_minor), currency: entry.currency };
    });
    compensations.set(transferKey, { tenantId, transferKey: compensationKeyOf(transferKey), kind: "compensation", valueDate, sourceRef, legs });
  }
  return compensations;
}
