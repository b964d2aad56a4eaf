import { gatewayAccounts } from "../cards/cards.ts";
import type { Tx } from "../db/transaction.ts";
import { postTransfer } from "../ledger/post-transfers.ts";
import { storedTransfers } from "../ledger/stored-transfers.ts";
import type { Leg } from "../ledger/transfer.ts";
import type { Message } from "../protocols/iso8583/index.ts";

/**
 * The ledger side of a reversal, full or partial (field 95): what it undoes of the original's
 * transfer. Originals post through the record core (inbound-originals.ts). Every transfer's key
 * derives from the original's natural key, so none posts twice.
 */
export interface OriginalForReversal {
  outcome: string;
  effect_key: string | null;
  account_id: string | null;
  amount_minor: bigint;
  currency: string | null;
  mti_class: string;
}

export type UndoOutcome = "released" | "reversed" | "reversed_to_suspense";

/**
 * The reverse of the original's transfer for `undoMinor` (its whole amount, or the difference to
 * field 95's actual amount): every leg of the stored transfer mirrored, under one key derived from
 * the original's key, so a second reversal of one original can never post. Reversing a credit
 * (a refund) the customer already spent takes the customer's side from the gateway suspense account.
 */
export async function undoOriginal(tx: Tx, tenantId: string, originalKey: string, original: OriginalForReversal & { effect_key: string }, undoMinor: bigint, message: Message): Promise<{ outcome: UndoOutcome; effectKey: string }> {
  const isHold = original.mti_class === "010" || original.mti_class === "012";
  const effectKey = `${originalKey}:${isHold ? "release" : "reversal"}`;
  const stored = (await storedTransfers(tx, tenantId, [original.effect_key])).get(original.effect_key);
  if (stored === undefined) throw new Error(`original transfer ${original.effect_key} is not in the ledger`);
  const mirrored = (replaceAccount?: { from: string; to: string }) => ({
    tenantId, transferKey: effectKey, kind: isHold ? "card_hold_release" : "card_reversal", valueDate: new Date().toISOString().slice(0, 10),
    sourceRef: `iso8583:${message.mti}:${originalKey}`,
    legs: [...stored.entries.values()].map((entry): Leg => ({
      accountId: entry.account_id === replaceAccount?.from ? replaceAccount.to : entry.account_id,
      direction: entry.direction === "D" ? "C" : "D", amountMinor: undoMinor, currency: entry.currency,
    })),
  });
  const posted = await postTransfer(tx, mirrored());
  if (posted.ok) return { outcome: isHold ? "released" : "reversed", effectKey };
  if (posted.error.code !== "LEDGER_INSUFFICIENT_FUNDS" || original.account_id === null) throw new Error(`reversal refused by the ledger: ${posted.error.code}`);
  const toSuspense = await postTransfer(tx, mirrored({ from: original.account_id, to: gatewayAccounts.suspense(original.currency ?? "") }));
  if (!toSuspense.ok) throw new Error(`reversal refused by the ledger: ${toSuspense.error.code}`);
  return { outcome: "reversed_to_suspense", effectKey };
}
