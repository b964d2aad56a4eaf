import { assert } from "../assert.ts";
import type { Queryable } from "../db/pool.ts";
import { sqlState, type Tx } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { ledgerEntryUniqueHits, ledgerTransfers } from "../observability/metrics.ts";
import { accountKinds, type AccountKind } from "./account-kinds.ts";
import { lockedBalances } from "./balance.ts";
import { LedgerUniqueIndexHit, type PostOutcome } from "./post-outcome.ts";
import { compareStored, storedTransfers } from "./stored-transfers.ts";
import { assertTransferWellFormed, entryKeyOf, type Transfer } from "./transfer.ts";

export { LedgerUniqueIndexHit, type PostOutcome };

type Outcome = Result<PostOutcome, Finding>;

/**
 * THE posting path: every channel posts through here, a single transfer being a batch of one.
 * Inside the caller's transaction (so its dedup mark commits with the posting), in order:
 *   1. one account check: every leg's account exists, in the leg's currency;
 *   2. one probe for keys posted before, among the transfers that touch an account this batch
 *      spends from (replays are compared, never re-checked for funds, and fund nothing; the
 *      others learn it from the insert);
 *   3. one funds check: the customer accounts a new transfer reduces are locked in sorted order
 *      and read once; transfers take their share in batch order, and one that would take an
 *      account below zero is refused (LEDGER_INSUFFICIENT_FUNDS) while later ones may pass;
 *   4. one transfers insert and one entries insert (the database adds the balance delta rows);
 *   5. one replay comparison: `exists` or `exists_with_different_<field>`.
 * The transfer primary key arbitrates concurrent posts of one key: the loser waits for the winner
 * to commit and then compares like any replay. Never check-then-act.
 */
export async function postTransfers(tx: Tx, transfers: readonly Transfer[]): Promise<Outcome[]> {
  if (transfers.length === 0) return [];
  const tenantId = transfers[0]?.tenantId ?? "";
  const results: Array<Outcome | undefined> = transfers.map((transfer) => {
    assert(transfer.tenantId === tenantId, "a batch belongs to one tenant");
    if (transfer.legs.length === 0) return fail(finding("LEDGER_TRANSFER_EMPTY", `transfer ${transfer.transferKey} has no legs`, { field: "legs" }));
    assertTransferWellFormed(transfer);
    return undefined;
  });

  const accounts = await accountsOf(tx, tenantId, transfers);
  transfers.forEach((transfer, index) => {
    const problem = results[index] ? undefined : accountProblem(transfer, accounts);
    if (problem) results[index] = fail(problem);
  });

  const { toInsert, compareLater } = await checkFunds(tx, tenantId, transfers, results, accounts);

  const inserted = await insertTransfers(tx, tenantId, toInsert.map((i) => transfers[i] as Transfer));
  const insertedTransfers: Transfer[] = [];
  for (const index of toInsert) {
    const transfer = transfers[index] as Transfer;
    if (inserted.has(transfer.transferKey)) {
      insertedTransfers.push(transfer);
      results[index] = ok("applied");
    } else {
      compareLater.push(index); // another transaction committed this key meanwhile
    }
  }
  await insertEntries(tx, tenantId, insertedTransfers);
  await compareReplays(tx, tenantId, transfers, compareLater, results);

  return results.map((result) => {
    assert(result !== undefined, "every transfer of a batch has an outcome");
    if (result.ok) ledgerTransfers.inc({ outcome: result.value });
    return result;
  });
}

/** One transfer: a batch of one through the same path. */
export async function postTransfer(tx: Tx, transfer: Transfer): Promise<Outcome> {
  const [result] = await postTransfers(tx, [transfer]);
  assert(result, "a batch of one has one outcome");
  return result;
}

interface AccountRow {
  kind: AccountKind;
  currency: string;
}

async function accountsOf(tx: Queryable, tenantId: string, transfers: readonly Transfer[]): Promise<Map<string, AccountRow>> {
  const ids = [...new Set(transfers.flatMap((t) => t.legs.map((l) => l.accountId)))];
  const { rows } = await tx.query<{ account_id: string; kind: AccountKind; currency: string }>(
    "SELECT account_id, kind, currency FROM account WHERE tenant_id = $1 AND account_id = ANY($2::text[])",
    [tenantId, ids],
  );
  return new Map(rows.map((r) => [r.account_id, { kind: r.kind, currency: r.currency }]));
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
  const { rows } = await tx.query<{ transfer_key: string }>("SELECT transfer_key FROM transfer WHERE tenant_id = $1 AND transfer_key = ANY($2::text[])", [tenantId, keys]);
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

/**
 * Decides, in batch order, which new transfers the funds allow. The balances are read under the
 * accounts' row locks (lockedBalances), which every reducing transfer of those accounts takes
 * until its commit, so no two transactions can spend the same funds. Keys posted before are
 * probed after the locks, so a key that a previous holder of a lock committed is seen as a replay
 * (a replay of a transfer applied when the funds were there is still a replay).
 */
async function checkFunds(
  tx: Tx, tenantId: string, transfers: readonly Transfer[], results: Array<Outcome | undefined>, accounts: Map<string, AccountRow>,
): Promise<{ toInsert: number[]; compareLater: number[] }> {
  const deltasByIndex = new Map<number, Map<string, bigint>>();
  const reduced: string[] = [];
  transfers.forEach((transfer, index) => {
    if (results[index]) return;
    const deltas = customerDeltas(transfer, accounts);
    deltasByIndex.set(index, deltas);
    for (const [accountId, delta] of deltas) if (delta < 0n) reduced.push(accountId);
  });
  const available = await lockedBalances(tx, tenantId, reduced);
  // Only a transfer that touches an account spent from in this batch needs to know beforehand
  // whether it is a replay: a replay is compared, never refused for funds, and a replayed credit
  // must not fund a later debit of the batch. Every other one goes straight to the insert, whose
  // ON CONFLICT answers the same question for free.
  const spent = new Set(reduced);
  const funds = [...deltasByIndex].filter(([, deltas]) => [...deltas.keys()].some((accountId) => spent.has(accountId))).map(([index]) => index);
  const existing = await existingKeys(tx, tenantId, funds.map((i) => (transfers[i] as Transfer).transferKey));

  const toInsert: number[] = [];
  const compareLater: number[] = [];
  const firstInBatch = new Set<string>();
  transfers.forEach((transfer, index) => {
    if (results[index]) return;
    if (existing.has(transfer.transferKey) || firstInBatch.has(transfer.transferKey)) {
      compareLater.push(index);
      return;
    }
    const deltas = deltasByIndex.get(index) ?? new Map<string, bigint>();
    const short = [...deltas].find(([accountId, delta]) => delta < 0n && (available.get(accountId) ?? 0n) + delta < 0n);
    if (short) {
      results[index] = fail(finding("LEDGER_INSUFFICIENT_FUNDS", `account ${short[0]} has insufficient funds`, { field: "amount" }));
      return;
    }
    for (const [accountId, delta] of deltas) if (available.has(accountId)) available.set(accountId, (available.get(accountId) ?? 0n) + delta);
    firstInBatch.add(transfer.transferKey);
    toInsert.push(index);
  });
  return { toInsert, compareLater };
}

async function insertTransfers(tx: Queryable, tenantId: string, transfers: Transfer[]): Promise<Set<string>> {
  if (transfers.length === 0) return new Set();
  const { rows } = await tx.query<{ transfer_key: string }>(
    `INSERT INTO transfer (tenant_id, transfer_key, kind, value_date, source_ref)
     SELECT $1, t.transfer_key, t.kind, t.value_date::date, t.source_ref
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS t(transfer_key, kind, value_date, source_ref)
     ON CONFLICT (tenant_id, transfer_key) DO NOTHING RETURNING transfer_key`,
    [tenantId, transfers.map((t) => t.transferKey), transfers.map((t) => t.kind), transfers.map((t) => t.valueDate), transfers.map((t) => t.sourceRef ?? null)],
  );
  return new Set(rows.map((r) => r.transfer_key));
}

async function insertEntries(tx: Queryable, tenantId: string, transfers: Transfer[]): Promise<void> {
  if (transfers.length === 0) return;
  const columns = { entryKeys: [] as string[], transferKeys: [] as string[], accountIds: [] as string[], directions: [] as string[], amounts: [] as string[], currencies: [] as string[], valueDates: [] as string[] };
  for (const transfer of transfers) {
    for (const [index, leg] of transfer.legs.entries()) {
      columns.entryKeys.push(entryKeyOf(transfer.transferKey, index));
      columns.transferKeys.push(transfer.transferKey);
      columns.accountIds.push(leg.accountId);
      columns.directions.push(leg.direction);
      columns.amounts.push(leg.amountMinor.toString());
      columns.currencies.push(leg.currency);
      columns.valueDates.push(transfer.valueDate);
    }
  }
  const firstKey = transfers[0]?.transferKey ?? "";
  try {
    const result = await tx.query(
      `INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
       SELECT $1, e.entry_key, e.transfer_key, e.account_id, e.direction, e.amount_minor, e.currency, e.value_date::date
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::text[])
              AS e(entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
       ON CONFLICT (tenant_id, entry_key) DO NOTHING`,
      [tenantId, columns.entryKeys, columns.transferKeys, columns.accountIds, columns.directions, columns.amounts, columns.currencies, columns.valueDates],
    );
    if (result.rowCount !== columns.entryKeys.length) {
      ledgerEntryUniqueHits.inc(columns.entryKeys.length - (result.rowCount ?? 0));
      throw new LedgerUniqueIndexHit(firstKey);
    }
  } catch (error) {
    if (sqlState(error) !== "23505") throw error;
    ledgerEntryUniqueHits.inc();
    throw new LedgerUniqueIndexHit(firstKey);
  }
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
