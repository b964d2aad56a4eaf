/**
 * The shape of a transfer as the normalizer produces it and the ledger posts it: a balanced set
 * of legs under one key derived from the record's or intent's identity (never random, never
 * time). Types only; the ledger asserts what must hold of them (src/ledger/transfer.ts).
 */
export type Direction = "D" | "C";

export interface Leg {
  accountId: string;
  direction: Direction;
  amountMinor: bigint;
  currency: string;
}

export interface Transfer {
  tenantId: string;
  transferKey: string;
  kind: string;
  valueDate: string;    // YYYY-MM-DD
  /**
   * YYYY-MM-DD: the business day its money settles (docs/decisions/0101); stored as the value
   * date when not given (a transfer derived from another, a correction).
   */
  settlementDate?: string;
  sourceRef?: string;   // where it came from: identifiers only, never names or card data
  legs: Leg[];
}
