/** One thing `clearline ledger verify` found wrong, with the code the error catalog documents. */
export interface VerifyProblem {
  code: "LEDGER_TRANSFER_UNBALANCED_STORED" | "LEDGER_PROJECTION_MISMATCH"
    | "LEDGER_NEGATIVE_CUSTOMER_BALANCE" | "LEDGER_SETTLEMENT_NET_MISMATCH"
    | "LEDGER_CHECKPOINT_MISMATCH";
  tenantId: string;
  transferKey?: string;
  accountId?: string;
  message: string;
}
