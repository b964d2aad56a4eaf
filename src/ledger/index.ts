/**
 * The ledger, entered here (docs/decisions/0069): ONE posting path for every channel, accounts,
 * exact balances, statements, compensations and the ledger's verification. Its tables (account,
 * transfer, ledger_entry, the balance projection, compensation, the settlement net) are read and
 * written by its own files; other rooms call the functions below.
 */
export { accountKinds, type AccountKind } from "./account-kinds.ts";
export { suspenseBalancePerDay, type SuspenseBalanceOfDay } from "./balance-history.ts";
export {
  accountsPage, findAccount, findAccounts, listAccounts, openAccount, type Account,
} from "./accounts.ts";
export {
  advanceProjection, balanceOf, projectionLag, tenantsWithAccounts, type Balance,
} from "./balance.ts";
export {
  asOfDateOf, availableRules, balanceKindOf, balanceKinds, balanceOfKind, balancesOnDate,
  setAvailableRule, type AvailableRule, type BalanceKind, type BalancesOnDate,
} from "./balance-on-date.ts";
export {
  compensationsOf, linkCompensations, type CompensationLink,
} from "./compensation.ts";
export {
  dayStatement, dayStatementCamt053, type DayStatement,
} from "./day-statement.ts";
export {
  postTransfer, postTransfers, type Posted, type PostResult,
} from "./post-transfers.ts";
export {
  accountStatement, postedTransfer, statementDocument,
} from "./statement.ts";
export {
  settlementTotals, type SettlementAccountTotals, type SettlementBucket, type SettlementBucketName,
} from "./settlement-totals.ts";
export {
  runningBalances, statementWithRunningBalance, type StatementWithBalances,
} from "./running-balance.ts";
export {
  settlementDatesOf, storedTransfers, transferLegs, transfersWithLegs, type ShownTransfer,
} from "./stored-transfers.ts";
export type { Direction, Leg, Transfer } from "./transfer.ts";
export { findTransfer, transfersPage, type TransferPageQuery } from "./transfer-pages.ts";
export {
  ledgerStats, verifyLedger, type VerifyMode, type VerifyOptions, type VerifyReport,
} from "./verify.ts";
