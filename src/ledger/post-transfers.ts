import { assert } from "../assert.ts";
import type { Queryable } from "../db/pool.ts";
import { sqlState, type Tx } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { ledgerEntryUniqueHits, ledgerTransfers } from "../observability/metrics.ts";
import { accountKinds, type AccountKind } from "./account-kinds.ts";
import { balancesOnDate, type AvailableRule } from "./balance-on-date.ts";
import { balancesOfLocked, LOCKED_ACCOUNT_IDS, lockedAccountsCondition, lockedAccountsParams, type LockedAccounts } from "./balance.ts";
import { sentTogether } from "../db/pipeline.ts";
import { LedgerUniqueIndexHit, type PostOutcome } from "./post-outcome.ts";
import { compareStored, storedTransfers } from "./stored-transfers.ts";
import { assertTransferWellFormed, entryKeyOf, type Transfer } from "./transfer.ts";

export { LedgerUniqueIndexHit, type PostOutcome };

/** What the ledger said of a transfer: posted, a replay, a conflict, or refused with a finding. */
export type PostResult = Result<PostOutcome, Finding>;
type Outcome = PostResult;

/** An item handed to `postTransfers`, given back with its transfer's outcome. */
export type Posted<T> = T & { readonly outcome: PostResult };

/**
 * THE posting path: every channel posts through here, a single transfer being a batch of one.
 * Inside the caller's transaction (so its dedup mark commits with the posting), in order:
 *   1. one statement checks every leg's account (exists, in the leg's currency) and row-locks,
 *      in sorted order, the accounts the batch could take below zero;
 *   2. one funds check reads those accounts' balances; transfers take their share in batch order,
 *      and one that would take an account below zero is refused (LEDGER_INSUFFICIENT_FUNDS) while
 *      later ones may pass. Only where a replay could change that answer (a refusal, or funds
 *      credited and spent within the batch) are keys posted before probed first: replays are
 *      compared, never refused for funds, and fund nothing;
 *   3. one statement inserts the transfers and their entries (the database adds the balance
 *      delta rows); a key that exists is left out, and compared:
 *   4. one replay comparison, where there are replays: `exists` or `exists_with_different_<field>`.
 * The transfer primary key arbitrates concurrent posts of one key: the loser waits for the winner
 * to commit and then compares like any replay. Never check-then-act.
 *
 * Each item comes back with its transfer's outcome (the caller's own fields kept), in batch order,
 * so a caller reads an item and its outcome together and indexes no array beside the batch.
 */
export async function postTransfers<T extends { readonly transfer: Transfer }>(
  tx: Tx, items: readonly T[],
): Promise<Array<Posted<T>>> {
  const outcomes = await postBatch(tx, items.map((item) => item.transfer));
  return items.map((item, index) => {
    const outcome = outcomes[index];
    assert(outcome !== undefined, "every transfer of a batch has an outcome");
    return { ...item, outcome };
  });
}

async function postBatch(tx: Tx, transfers: readonly Transfer[]): Promise<Outcome[]> {
  if (transfers.length === 0) return [];
  const tenantId = transfers[0]?.tenantId ?? "";
  const results: Array<Outcome | undefined> = transfers.map((transfer) => {
    assert(transfer.tenantId === tenantId, "a batch belongs to one tenant");
    if (transfer.legs.length === 0) return fail(finding("LEDGER_TRANSFER_EMPTY", `transfer ${transfer.transferKey} has no legs`, { field: "legs" }));
    assertTransferWellFormed(transfer);
    return undefined;
  });

  const { accounts, lockedBalances } = await accountsOf(tx, tenantId, transfers);
  transfers.forEach((transfer, index) => {
    const problem = results[index] ? undefined : accountProblem(transfer, accounts);
    if (problem) results[index] = fail(problem);
  });

  const { toInsert, compareLater } = await checkFunds(tx, tenantId, transfers, results, accounts, lockedBalances);

  const inserted = await insertTransfers(tx, tenantId, toInsert.map((i) => transfers[i] as Transfer));
  for (const index of toInsert) {
    const transfer = transfers[index] as Transfer;
    if (inserted.has(transfer.transferKey)) {
      results[index] = ok("applied");
    } else {
      compareLater.push(index); // posted before (a replay), or committed by another transaction meanwhile
    }
  }
  await compareReplays(tx, tenantId, transfers, compareLater, results);

  return results.map((result) => {
    assert(result !== undefined, "every transfer of a batch has an outcome");
    if (result.ok) ledgerTransfers.inc({ outcome: result.value });
    return result;
  });
}

/** One transfer: a batch of one through the same path. */
export async function postTransfer(tx: Tx, transfer: Transfer): Promise<Outcome> {
  const [posted] = await postTransfers(tx, [{ transfer }]);
  assert(posted, "a batch of one has one outcome");
  return posted.outcome;
}

interface AccountRow {
  kind: AccountKind;
  currency: string;
  locked: boolean;   // row-locked by this statement: a leg of the batch could spend it
  availableRule: AvailableRule;
}

/**
 * One statement: every leg's account (kind, currency), and a row lock, taken in sorted order so
 * two callers never deadlock, on each account a leg of the batch could reduce below zero (a
 * debit of a credit-normal account that may not go negative, or the mirror case). That is a
 * superset of the accounts the funds check reads; the balances are read in a later statement,
 * whose snapshot comes after the locks (decision 0012). Accounts are never deleted and never
 * change kind or currency, so reading them in the locking statement's snapshot is exact.
 *
 * Each account is found by one probe of its primary key (docs/decisions/0052). The locks are taken
 * by the probes, one after another in the order of the sorted id list (a nested loop runs its outer
 * rows in their order), so every caller still locks in the same order.
 */
const ACCOUNTS_AND_LOCKS_SQL = `
  WITH spendable AS MATERIALIZED (
    SELECT s.account_id
      FROM (SELECT DISTINCT unnest(${LOCKED_ACCOUNT_IDS}) ORDER BY 1 OFFSET 0) AS w(account_id)
     CROSS JOIN LATERAL (
        SELECT s.account_id FROM account s
         WHERE s.tenant_id = $1 AND s.account_id = w.account_id AND ${lockedAccountsCondition("s")}
           FOR UPDATE) s
  )
  SELECT a.account_id, a.kind, a.currency, a.available_rule, s.account_id IS NOT NULL AS locked
    FROM (SELECT DISTINCT unnest($6::text[])) AS w(account_id)
   CROSS JOIN LATERAL (
     SELECT account_id, kind, currency, available_rule
       FROM account a
      WHERE a.tenant_id = $1 AND a.account_id = w.account_id
     OFFSET 0) a
    LEFT JOIN spendable s ON s.account_id = a.account_id`;

const guardedKinds = (normalSide: "D" | "C") =>
  Object.entries(accountKinds).filter(([, k]) => !k.mayGoNegative && k.normalSide === normalSide).map(([kind]) => kind);

/**
 * The locking statement, and the balances of the accounts it locks sent right behind it (one round
 * trip on a pipelining client; `balancesOfLocked` says why its snapshot is after the locks).
 */
async function accountsOf(tx: Tx, tenantId: string, transfers: readonly Transfer[]): Promise<{ accounts: Map<string, AccountRow>; lockedBalances: Map<string, bigint> }> {
  const legs = transfers.flatMap((t) => t.legs);
  const ids = [...new Set(legs.map((l) => l.accountId))];
  const locked: LockedAccounts = {
    debited: [...new Set(legs.filter((l) => l.direction === "D").map((l) => l.accountId))], debitGuardedKinds: guardedKinds("C"),
    credited: [...new Set(legs.filter((l) => l.direction === "C").map((l) => l.accountId))], creditGuardedKinds: guardedKinds("D"),
  };
  const [{ rows }, lockedBalances] = await sentTogether(tx,
    () => tx.query<{
      account_id: string; kind: AccountKind; currency: string; locked: boolean;
      available_rule: AvailableRule;
    }>(
      { name: "clearline.ledger.accounts-and-locks", text: ACCOUNTS_AND_LOCKS_SQL }, [...lockedAccountsParams(tenantId, locked), ids]),
    () => balancesOfLocked(tx, tenantId, locked));
  const accounts = new Map(rows.map((r) => [r.account_id, {
    kind: r.kind, currency: r.currency, locked: r.locked, availableRule: r.available_rule,
  }]));
  // Accounts are never deleted and never change kind: every account the first statement locked is read by the second.
  for (const [accountId, row] of accounts) if (row.locked) assert(lockedBalances.has(accountId), `account ${accountId} was locked and its balance read`);
  return { accounts, lockedBalances };
}

function accountProblem(transfer: Transfer, accounts: Map<string, AccountRow>): Finding | undefined {
  for (const [index, leg] of transfer.legs.entries()) {
    const account = accounts.get(leg.accountId);
    if (!account) return finding("LEDGER_ACCOUNT_UNKNOWN", `account ${leg.accountId} does not exist`, { field: `legs[${index}].accountId` });
    if (account.currency !== leg.currency) {
      return finding("LEDGER_ACCOUNT_CURRENCY_MISMATCH", `leg in ${leg.currency} on account ${leg.accountId} held in ${account.currency}`, { field: `legs[${index}].currency` });
    }
  }
  return undefined;
}

async function existingKeys(tx: Queryable, tenantId: string, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const { rows } = await tx.query<{ transfer_key: string }>(
    // One probe per key (docs/decisions/0052).
    `SELECT t.transfer_key FROM unnest($2::text[]) AS w(transfer_key)
      CROSS JOIN LATERAL (SELECT transfer_key FROM transfer WHERE tenant_id = $1 AND transfer_key = w.transfer_key OFFSET 0) t`,
    [tenantId, [...new Set(keys)]]);
  return new Set(rows.map((r) => r.transfer_key));
}

/** Net change per account that may not go negative, signed by its normal side. */
function customerDeltas(transfer: Transfer, accounts: Map<string, AccountRow>): Map<string, bigint> {
  const deltas = new Map<string, bigint>();
  for (const leg of transfer.legs) {
    const kind = accounts.get(leg.accountId)?.kind;
    if (!kind || accountKinds[kind].mayGoNegative) continue;
    const delta = leg.direction === accountKinds[kind].normalSide ? leg.amountMinor : -leg.amountMinor;
    deltas.set(leg.accountId, (deltas.get(leg.accountId) ?? 0n) + delta);
  }
  return deltas;
}

interface FundsPlan { toInsert: number[]; compareLater: number[]; refused: Map<number, string> }

/**
 * Decides, in batch order, which new transfers the funds allow. The balances are read under the
 * accounts' row locks (taken by accountsOf), which every reducing transfer of those accounts
 * takes until its commit, so no two transactions can spend the same funds.
 *
 * Keys posted before matter only where a replay could change an answer: a replay is compared,
 * never refused for funds, and a replayed credit must not fund a later debit of the batch. So the
 * batch is first planned as if every key were new; if no transfer is refused and no account
 * credited in the batch is spent later in it, replays cannot have changed any answer, and the
 * insert's ON CONFLICT tells them apart for free. Otherwise the keys are probed (after the locks,
 * so a key that a previous holder of a lock committed is seen) and the batch is planned again.
 */
async function checkFunds(
  tx: Tx, tenantId: string, transfers: readonly Transfer[], results: Array<Outcome | undefined>, accounts: Map<string, AccountRow>,
  lockedBalances: ReadonlyMap<string, bigint>,
): Promise<{ toInsert: number[]; compareLater: number[] }> {
  const deltasByIndex = new Map<number, Map<string, bigint>>();
  const reduced: string[] = [];
  transfers.forEach((transfer, index) => {
    if (results[index]) return;
    const deltas = customerDeltas(transfer, accounts);
    deltasByIndex.set(index, deltas);
    for (const [accountId, delta] of deltas) if (delta < 0n) reduced.push(accountId);
  });
  for (const accountId of reduced) assert(accounts.get(accountId)?.locked === true && lockedBalances.has(accountId), `account ${accountId} is spent, was locked and its balance read after the lock`);
  const available = new Map([...new Set(reduced)].map((accountId) => [accountId, lockedBalances.get(accountId) as bigint]));
  const creditsWait = await spendAvailableBalances(tx, tenantId, accounts, available);
  let plan = planFunds(transfers, results, deltasByIndex, available, new Set(), creditsWait);
  if (plan.refused.size > 0 || fundsWithinBatch(deltasByIndex)) {
    const spent = new Set(reduced);
    const funds = [...deltasByIndex].filter(([, deltas]) => [...deltas.keys()].some((accountId) => spent.has(accountId))).map(([index]) => index);
    const existing = await existingKeys(tx, tenantId,
      funds.map((i) => (transfers[i] as Transfer).transferKey));
    plan = planFunds(transfers, results, deltasByIndex, available, existing, creditsWait);
  }
  for (const [index, accountId] of plan.refused) results[index] = fail(finding("LEDGER_INSUFFICIENT_FUNDS", `account ${accountId} has insufficient funds`, { field: "amount" }));
  return { toInsert: plan.toInsert, compareLater: plan.compareLater };
}

/**
 * The spent accounts whose rule is settled-credits spend the smaller of their exact balance and
 * their available balance today (docs/decisions/0109), read after the row locks; they are
 * returned, since a credit of the batch does not fund them.
 */
async function spendAvailableBalances(
  tx: Tx, tenantId: string, accounts: ReadonlyMap<string, AccountRow>,
  available: Map<string, bigint>,
): Promise<Set<string>> {
  const waiting = [...available.keys()]
    .filter((accountId) => accounts.get(accountId)?.availableRule === "settled-credits");
  const today = new Date().toISOString().slice(0, 10);
  for (const accountId of waiting) {
    const onDate = await balancesOnDate(tx, tenantId, accountId, today);
    assert(onDate !== undefined, `account ${accountId} was locked, so it exists`);
    const exact = available.get(accountId) as bigint;
    available.set(accountId, onDate.availableMinor < exact ? onDate.availableMinor : exact);
  }
  return new Set(waiting);
}

/** Whether a guarded account gains in one transfer of the batch and is spent in a later one. */
function fundsWithinBatch(deltasByIndex: Map<number, Map<string, bigint>>): boolean {
  const credited = new Set<string>();
  for (const deltas of deltasByIndex.values()) {
    for (const [accountId, delta] of deltas) if (delta < 0n && credited.has(accountId)) return true;
    for (const [accountId, delta] of deltas) if (delta > 0n) credited.add(accountId);
  }
  return false;
}

function planFunds(
  transfers: readonly Transfer[], results: Array<Outcome | undefined>, deltasByIndex: Map<number, Map<string, bigint>>,
  balances: ReadonlyMap<string, bigint>, existing: Set<string>, creditsWait: ReadonlySet<string>,
): FundsPlan {
  const available = new Map(balances);
  const plan: FundsPlan = { toInsert: [], compareLater: [], refused: new Map() };
  const firstInBatch = new Set<string>();
  transfers.forEach((transfer, index) => {
    if (results[index]) return;
    if (existing.has(transfer.transferKey) || firstInBatch.has(transfer.transferKey)) {
      plan.compareLater.push(index);
      return;
    }
    const deltas = deltasByIndex.get(index) ?? new Map<string, bigint>();
    const short = [...deltas].find(([accountId, delta]) => delta < 0n && (available.get(accountId) ?? 0n) + delta < 0n);
    if (short) {
      plan.refused.set(index, short[0]);
      return;
    }
    for (const [accountId, delta] of deltas) {
      // A settled-credits account's credit waits for its settlement (0109): it funds nothing now.
      if (!available.has(accountId) || (delta > 0n && creditsWait.has(accountId))) continue;
      available.set(accountId, (available.get(accountId) ?? 0n) + delta);
    }
    firstInBatch.add(transfer.transferKey);
    plan.toInsert.push(index);
  });
  return plan;
}

/**
 * The transfers and their entries in ONE statement: the entries of the transfers this statement
 * inserted (a key another transaction committed meanwhile is left to the replay comparison). The
 * ledger's statement-level checks (decision 0030) run at the end of the statement and see both.
 */
const INSERT_TRANSFERS_SQL = `
  WITH t AS (
    INSERT INTO transfer (tenant_id, transfer_key, kind, value_date, source_ref, settlement_date)
    SELECT $1, t.transfer_key, t.kind, t.value_date::date, t.source_ref, t.settlement_date::date
      FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $13::text[])
           AS t(transfer_key, kind, value_date, source_ref, settlement_date)
    ON CONFLICT (tenant_id, transfer_key) DO NOTHING RETURNING transfer_key
  ), e AS (
    INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
    SELECT $1, e.entry_key, e.transfer_key, e.account_id, e.direction, e.amount_minor, e.currency, e.value_date::date
      FROM unnest($6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[], $11::text[], $12::text[])
           AS e(entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
     WHERE e.transfer_key IN (SELECT transfer_key FROM t)
    ON CONFLICT (tenant_id, entry_key) DO NOTHING RETURNING transfer_key
  )
  SELECT transfer_key, (SELECT count(*) FROM e)::int AS entries FROM t`;

/** Inserts the new transfers with their entries; returns the keys inserted (the others were committed meanwhile). */
async function insertTransfers(tx: Queryable, tenantId: string, transfers: Transfer[]): Promise<Set<string>> {
  if (transfers.length === 0) return new Set();
  const entries = { entryKeys: [] as string[], transferKeys: [] as string[], accountIds: [] as string[], directions: [] as string[], amounts: [] as string[], currencies: [] as string[], valueDates: [] as string[] };
  for (const transfer of transfers) {
    for (const [index, leg] of transfer.legs.entries()) {
      entries.entryKeys.push(entryKeyOf(transfer.transferKey, index));
      entries.transferKeys.push(transfer.transferKey);
      entries.accountIds.push(leg.accountId);
      entries.directions.push(leg.direction);
      entries.amounts.push(leg.amountMinor.toString());
      entries.currencies.push(leg.currency);
      entries.valueDates.push(transfer.valueDate);
    }
  }
  const firstKey = transfers[0]?.transferKey ?? "";
  let rows: Array<{ transfer_key: string; entries: number }>;
  try {
    ({ rows } = await tx.query<{ transfer_key: string; entries: number }>({ name: "clearline.ledger.insert-transfers", text: INSERT_TRANSFERS_SQL }, [
      tenantId, transfers.map((t) => t.transferKey), transfers.map((t) => t.kind), transfers.map((t) => t.valueDate), transfers.map((t) => t.sourceRef ?? null),
      entries.entryKeys, entries.transferKeys, entries.accountIds, entries.directions, entries.amounts, entries.currencies, entries.valueDates,
      // docs/decisions/0101: a transfer without its own settlement date settles on its value date
      transfers.map((t) => t.settlementDate ?? t.valueDate),
    ]));
  } catch (error) {
    if (sqlState(error) !== "23505") throw error;
    ledgerEntryUniqueHits.inc();
    throw new LedgerUniqueIndexHit(firstKey);
  }
  const inserted = new Set(rows.map((r) => r.transfer_key));
  const expected = transfers.filter((t) => inserted.has(t.transferKey)).reduce((n, t) => n + t.legs.length, 0);
  const written = rows[0]?.entries ?? 0;
  if (written !== expected) {
    ledgerEntryUniqueHits.inc(expected - written);
    throw new LedgerUniqueIndexHit(firstKey);
  }
  return inserted;
}

async function compareReplays(tx: Queryable, tenantId: string, transfers: readonly Transfer[], indexes: number[], results: Array<Outcome | undefined>): Promise<void> {
  if (indexes.length === 0) return;
  const stored = await storedTransfers(tx, tenantId, indexes.map((i) => (transfers[i] as Transfer).transferKey));
  for (const index of indexes) {
    const transfer = transfers[index] as Transfer;
    const outcome = compareStored(transfer, stored.get(transfer.transferKey));
    // The row was there a moment ago and ledger rows are never deleted.
    assert(outcome !== undefined, `transfer ${transfer.transferKey} conflicted and can be read back`);
    results[index] = ok(outcome);
  }
}
