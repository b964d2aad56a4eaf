import { assert } from "../assert.ts";
import type { Transfer } from "../ledger/index.ts";
import type { PerimeterRecord } from "./perimeter.ts";

/**
 * What an incident compensates of one transfer of its perimeter (docs/decisions/0015, items
 * 5-8): the transfer's full mirror (compensationFor), the record's amount and what reversals,
 * returns or refunds already undid of it. `outcome` is set when nothing is to be posted.
 */
export interface PlannedCompensation {
  transferKey: string;
  mirror: Transfer;
  amountMinor: bigint;
  undoneMinor: bigint;
  outcome?: "already_compensated" | "already_undone" | "undoes_original";
}

/** One plan per transfer of the perimeter that the ledger holds, in perimeter order. */
export function plannedCompensations(records: readonly PerimeterRecord[], mirrors: ReadonlyMap<string, Transfer>): PlannedCompensation[] {
  const planned = new Map<string, PlannedCompensation>();
  for (const record of records) {
    const mirror = record.transferKey === null ? undefined : mirrors.get(record.transferKey);
    if (record.transferKey === null || mirror === undefined || planned.has(record.transferKey)) continue;
    // A compensation that exists already (a review's replace, an earlier run) is not offered again:
    // its key is shared, and the net amount may differ from what it posted.
    // A return is not compensated on its own: what it undid already lowers its original's
    // compensation (item 5), so compensating it too would re-post the original's effect.
    const outcome = record.compensated ? "already_compensated" as const
      : record.undoesKey !== null ? "undoes_original" as const
        : record.undoneMinor >= record.amountMinor ? "already_undone" as const : undefined;
    planned.set(record.transferKey, { transferKey: record.transferKey, mirror, amountMinor: record.amountMinor, undoneMinor: record.undoneMinor, ...(outcome ? { outcome } : {}) });
  }
  return [...planned.values()];
}

/**
 * The compensation to post: the mirror with every leg scaled to what is still in effect,
 * `leg × (amount − undone) / amount`. The channels' transfers have legs of the record's amount,
 * so the scaled legs are exact and still balance; an inexact one would be a bug, not a rounding.
 */
export function netCompensationOf(planned: PlannedCompensation): Transfer {
  if (planned.undoneMinor === 0n) return planned.mirror;
  const remainingMinor = planned.amountMinor - planned.undoneMinor;
  return {
    ...planned.mirror,
    legs: planned.mirror.legs.map((leg) => {
      assert((leg.amountMinor * remainingMinor) % planned.amountMinor === 0n, `compensation of ${planned.transferKey}: leg ${leg.amountMinor} does not scale exactly`);
      return { ...leg, amountMinor: (leg.amountMinor * remainingMinor) / planned.amountMinor };
    }),
  };
}
