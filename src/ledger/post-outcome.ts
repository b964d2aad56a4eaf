/**
 * `applied`: this call posted the transfer. `exists`: the key was posted before with the same
 * content (a replay; nothing new). `exists_with_different_<field>`: the key was posted before
 * with other content, which is a conflict for a person to look at, never an overwrite.
 */
export type PostOutcome =
  | "applied"
  | "exists"
  | "exists_with_different_kind"
  | "exists_with_different_value_date"
  | "exists_with_different_legs"
  | "exists_with_different_account"
  | "exists_with_different_direction"
  | "exists_with_different_amount"
  | "exists_with_different_currency";

/** A new transfer's entry key was already taken: a bug upstream (metric must stay zero). */
export class LedgerUniqueIndexHit extends Error {
  readonly code = "LEDGER_ENTRY_UNIQUE_INDEX_HIT";
  constructor(transferKey: string) {
    super(`ledger_entry unique index refused entries of new transfer ${transferKey}: an entry key collides upstream`);
  }
}
