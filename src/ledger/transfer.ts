import { assert } from "../assert.ts";
import { limits } from "../config/limits.ts";
import type { Direction, Leg, Transfer } from "../normalize/transfer.ts";

export type { Direction, Leg, Transfer };

export function sumMinor(legs: readonly Leg[], direction: Direction, currency?: string): bigint {
  let total = 0n;
  for (const leg of legs) if (leg.direction === direction && (currency === undefined || leg.currency === currency)) total += leg.amountMinor;
  return total;
}

/**
 * What must hold of every transfer that reaches the database. A transfer that breaks one of
 * these was built wrong by our own code (posting rules, API), so it is a bug: assert, not return.
 */
export function assertTransferWellFormed(transfer: Transfer): void {
  assert(transfer.transferKey.length > 0 && transfer.transferKey.length <= 512, "transfer key is 1..512 characters");
  assert(/^\d{4}-\d{2}-\d{2}$/.test(transfer.valueDate), `value date ${transfer.valueDate} is YYYY-MM-DD`);
  assert(
    transfer.settlementDate === undefined || /^\d{4}-\d{2}-\d{2}$/.test(transfer.settlementDate),
    `settlement date ${transfer.settlementDate} is YYYY-MM-DD`,
  );
  assert(transfer.legs.length >= 2, "a transfer has at least two legs");
  assert(transfer.legs.length <= limits.ledger.transferLegsMax, `a transfer has at most ${limits.ledger.transferLegsMax} legs`);
  for (const leg of transfer.legs) {
    assert(typeof leg.amountMinor === "bigint", "amounts are bigint minor units");
    assert(leg.amountMinor > 0n, "leg amounts are positive");
    assert(leg.amountMinor <= limits.ledger.amountMinorMax, "leg amount within the accepted maximum");
  }
  for (const currency of new Set(transfer.legs.map((l) => l.currency))) {
    assert(sumMinor(transfer.legs, "D", currency) === sumMinor(transfer.legs, "C", currency), `transfer ${transfer.transferKey} legs must balance in ${currency}`);
  }
}

/** Entry keys derive from the transfer key by a fixed rule, so a replay produces the same keys. */
export function entryKeyOf(transferKey: string, legIndex: number): string {
  return `${transferKey}#${legIndex}`;
}
