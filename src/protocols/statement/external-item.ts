import type { Finding } from "../../errors/finding.ts";

/**
 * One item of the other side of a reconciliation, as their file states it: a bank statement
 * entry (camt.053/054), an ACH batch total, a CSV row. Direction is from OUR account's point of
 * view at them: C, they credited our account (money in); D, they debited it.
 */
export interface ExternalItem {
  itemKey: string;             // their identity of the item: AcctSvcrRef, NtryRef, CSV id, ...
  position: string;            // xmlPath or "line N"
  bookingDate: string;         // YYYY-MM-DD
  valueDate?: string;
  direction: "C" | "D";
  amountMinor: bigint;
  currency: string;
  status: "booked" | "pending";
  refs: string[];              // tagged references inside: "e2e:..", "uetr:..", "instr:..", "tx:..", "msg:..", "ref:.."
  parts: ExternalPart[];       // a batch entry's transactions (one Ntry, many TxDtls)
  description?: string;
  /** Set when the item's currency is not its statement's (decision 0104): what else it says. */
  foreign?: ForeignCurrencyDetail;
}

/** An amount of an entry's AmtDtls: InstdAmt, TxAmt, CntrValAmt, AnncdPstngAmt. */
export interface AmountDetail {
  kind: string;
  amountMinor: bigint;
  currency: string;
}

/**
 * An entry in another currency than its account: the amounts its details give, the exchange, and
 * the amount in the account's currency when one of them is in it (decision 0104).
 */
export interface ForeignCurrencyDetail {
  accountCurrency: string;
  accountAmountMinor?: bigint;
  amounts: AmountDetail[];
  exchange?: { sourceCurrency?: string; targetCurrency?: string; rate?: string };
}

/** AmtDtls amounts, in the order one in the account's currency is taken as its amount. */
export const accountAmountKinds: readonly string[] = [
  "CntrValAmt", "TxAmt", "InstdAmt", "AnncdPstngAmt",
];

/** The foreign-currency detail of an item in `currency` on an account in `accountCurrency`. */
export function foreignCurrencyDetail(
  accountCurrency: string, amounts: AmountDetail[],
  exchange: ForeignCurrencyDetail["exchange"],
): ForeignCurrencyDetail {
  const inAccountCurrency = accountAmountKinds
    .map((kind) => amounts.find((a) => a.kind === kind && a.currency === accountCurrency))
    .find((a) => a !== undefined);
  return {
    accountCurrency, amounts,
    ...(inAccountCurrency ? { accountAmountMinor: inAccountCurrency.amountMinor } : {}),
    ...(exchange && Object.keys(exchange).length > 0 ? { exchange } : {}),
  };
}

export interface ExternalPart {
  amountMinor?: bigint;
  refs: string[];
}

/** The statement around the items, when the format has one (camt). Balances are signed, credit positive. */
export interface ExternalStatementHead {
  statementRef?: string;
  accountIdentifier?: string;  // IBAN or other id of the account at them
  currency?: string;
  openingMinor?: bigint;
  closingMinor?: bigint;
}

export type ExternalEvent =
  | { type: "item"; item: ExternalItem }
  | { type: "end"; head: ExternalStatementHead; findings: Finding[] };

export interface ExternalReadLimits {
  itemsMax: number;
  partsPerItemMax: number;
  findingsMax: number;
}

/** Tags a reference so references of different kinds never collide ("e2e:ABC" is not "uetr:ABC"). */
export function taggedRef(tag: string, value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed && trimmed !== "NOTPROVIDED" ? `${tag}:${trimmed}` : undefined;
}
