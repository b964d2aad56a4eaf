/**
 * Account kinds and the side on which each one's balance grows. From the bank's books: money it
 * holds at a settlement bank is an asset (debit-normal); what it owes customers, and what sits in
 * suspense or holds awaiting a decision, are liabilities (credit-normal).
 */
export const accountKinds = {
  customer: { normalSide: "C", mayGoNegative: false },
  settlement: { normalSide: "D", mayGoNegative: true },
  suspense: { normalSide: "C", mayGoNegative: true },
  holds: { normalSide: "C", mayGoNegative: true },
  clearing: { normalSide: "D", mayGoNegative: true },
  revenue: { normalSide: "C", mayGoNegative: true },
} as const satisfies Record<string, { normalSide: "D" | "C"; mayGoNegative: boolean }>;

export type AccountKind = keyof typeof accountKinds;

export function isAccountKind(kind: string): kind is AccountKind {
  return Object.hasOwn(accountKinds, kind);
}

/** Balance from sums, signed by the account's normal side. */
export function signedBalance(kind: AccountKind, debitsMinor: bigint, creditsMinor: bigint): bigint {
  return accountKinds[kind].normalSide === "C" ? creditsMinor - debitsMinor : debitsMinor - creditsMinor;
}
