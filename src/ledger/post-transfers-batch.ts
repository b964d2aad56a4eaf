import { assert } from "../assert.ts";
import type { Queryable } from "../db/pool.ts";
import { sqlState, type Tx } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { ledgerEntryUniqueHits, ledgerTransfers } from "../observability/metrics.ts";
import { accountKinds, type AccountKind } from "./account-kinds.ts";
import { availableBalanceForUpdate } from "./balance.ts";
import { LedgerUniqueIndexHit, type PostOutcome } from "./post-transfer.ts";
import { compareStored, storedTransfers } from "./stored-transfers.ts";
import { assertTransferWellFormed, entryKeyOf, type Transfer } from "./transfer.ts";

/**
 * postTransfer for many transfers of one tenant in a handful of statements, inside the caller's
 * transaction. Each transfer gets exactly the outcome that postTransfer, called on the transfers
 * one after the other in this order, would give it: the same keys and entry keys, the same
 * database triggers (append-only, balanced at commit, entry joins only its own transaction's
 * transfer), `exists` / `exists_with_different_<field>` for a key posted before (or earlier in
 * the batch), and no customer account taken below zero, counting the earlier transfers of the
 * batch. test/ledger/post-transfers-batch.test.ts proves the equivalence case by case.
 *
 * Statements per batch: accounts (1), existing keys (1), customer locks and balances (2 per
 * customer account that a transfer reduces), transfers (1), entries (1), and a read-back of the
 * transfers that already existed (2).
 */
export async function postTransfersBatch(tx: Tx, transfers: readonly Transfer[]): Promise<Array<Result<PostOutcome, Finding>>> {
  const results: Array<Result<PostOutcome, Finding> | undefined> = new Array(transfers.length);
  if (transfers.length === 0) return [];
  const tenantId = transfers[0]?.tenantId ?? "";
  for (const [index, transfer] of transfers.entries()) {
    assert(transfer.tenantId === tenantId, "a batch belongs to one tenant");
    if (transfer.legs.length === 0) results[index] = fail(finding("LEDGER_TRANSFER_EMPTY", `transfer ${transfer.transferKey} has no legs`, { field: "legs" }));
    else assertTransferWellFormed(transfer);
  }

  // 1. Accounts: each leg's account exists in the leg's currency.
  const accounts = await accountsOf(tx, tenantId, transfers);
  for (const [index, transfer] of transfers.entries()) {
    if (results[index]) continue;
    const problem = accountProblem(transfer, accounts);
    if (problem) results[index] = fail(problem);
  }

  // 2. Keys posted before this batch: replays, compared after the inserts.
  const candidates = transfers.map((t, i) => (results[i] ? undefined : t.transferKey)).filter((k): k is string => k !== undefined);
  const existing = new Set<string>();
  if (candidates.length > 0) {
    const { rows } = await tx.query<{ transfer_key: string }>("SELECT transfer_key FROM transfer WHERE tenant_id = $1 AND transfer_key = ANY($2::text[])", [tenantId, candidates]);
    for (const row of rows) existing.add(row.transfer_key);
  }

  // 3. Funds, in batch order: a customer account is locked (sorted order, as postTransfer does)
  //    and its balance read once; each new transfer that passes takes its share of it.
  const toInsert: number[] = [];
  const compareLater: number[] = [];
  const firstInBatch = new Set<string>();
  const available = await lockReducedCustomers(tx, tenantId, transfers, results, accounts, existing);
  for (const [index, transfer] of transfers.entries()) {
    if (results[index]) continue;
    if (existing.has(transfer.transferKey) || firstInBatch.has(transfer.transferKey)) {
      compareLater.push(index);
      continue;
    }
    const deltas = customerDeltas(transfer, accounts);
    const short = [...deltas].some(([accountId, delta]) => delta < 0n && (available.get(accountId) ?? 0n) + delta < 0n);
    if (short) {
      results[index] = fail(finding("LEDGER_INSUFFICIENT_FUNDS", `account ${[...deltas].find(([id, d]) => d < 0n && (available.get(id) ?? 0n) + d < 0n)?.[0]} has insufficient funds`, { field: "amount" }));
      continue;
    }
    for (const [accountId, delta] of deltas) available.set(accountId, (available.get(accountId) ?? 0n) + delta);
    firstInBatch.add(transfer.transferKey);
    toInsert.push(index);
  }

  // 4. Transfers, then their entries. A key another transaction committed meanwhile comes back
  //    from ON CONFLICT as not inserted and is compared like any replay.
  const inserted = await insertTransfers(tx, tenantId, toInsert.map((i) => transfers[i] as Transfer));
  const insertedTransfers: Transfer[] = [];
  for (const index of toInsert) {
    const transfer = transfers[index] as Transfer;
    if (inserted.has(transfer.transferKey)) {
      insertedTransfers.push(transfer);
      results[index] = ok("applied");
    } else {
      compareLater.push(index);
    }
  }
  await insertEntries(tx, tenantId, insertedTransfers);

  // 5. Replays: compared with what is stored, in postTransfer's order of checks. (A replay is a
  //    replay whatever the funds: postTransfer, too, answers `exists*` for a key it finds.)
  if (compareLater.length > 0) {
    const stored = await storedTransfers(tx, tenantId, compareLater.map((i) => (transfers[i] as Transfer).transferKey));
    for (const index of compareLater) {
      const transfer = transfers[index] as Transfer;
      const outcome = compareStored(transfer, stored.get(transfer.transferKey));
      // The row was there a moment ago and ledger rows are never deleted.
      if (!outcome) throw new Error(`transfer ${transfer.transferKey} conflicted but cannot be read back`);
      results[index] = ok(outcome);
    }
  }

  return results.map((result) => {
    assert(result !== undefined, "every transfer of a batch has an outcome");
    if (result.ok) ledgerTransfers.inc({ outcome: result.value });
    return result;
  });
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

async function lockReducedCustomers(
  tx: Queryable, tenantId: string, transfers: readonly Transfer[], results: Array<Result<PostOutcome, Finding> | undefined>,
  accounts: Map<string, AccountRow>, existing: Set<string>,
): Promise<Map<string, bigint>> {
  const reduced = new Set<string>();
  for (const [index, transfer] of transfers.entries()) {
    if (results[index] || existing.has(transfer.transferKey)) continue;
    for (const [accountId, delta] of customerDeltas(transfer, accounts)) if (delta < 0n) reduced.add(accountId);
  }
  const available = new Map<string, bigint>();
  for (const accountId of [...reduced].sort()) available.set(accountId, await availableBalanceForUpdate(tx, tenantId, accountId));
  return available;
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
  const entryKeys: string[] = [];
  const transferKeys: string[] = [];
  const accountIds: string[] = [];
  const directions: string[] = [];
  const amounts: string[] = [];
  const currencies: string[] = [];
  const valueDates: string[] = [];
  for (const transfer of transfers) {
    for (const [index, leg] of transfer.legs.entries()) {
      entryKeys.push(entryKeyOf(transfer.transferKey, index));
      transferKeys.push(transfer.transferKey);
      accountIds.push(leg.accountId);
      directions.push(leg.direction);
      amounts.push(leg.amountMinor.toString());
      currencies.push(leg.currency);
      valueDates.push(transfer.valueDate);
    }
  }
  try {
    const result = await tx.query(
      `INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
       SELECT $1, e.entry_key, e.transfer_key, e.account_id, e.direction, e.amount_minor, e.currency, e.value_date::date
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::text[])
              AS e(entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
       ON CONFLICT (tenant_id, entry_key) DO NOTHING`,
      [tenantId, entryKeys, transferKeys, accountIds, directions, amounts, currencies, valueDates],
    );
    if (result.rowCount !== entryKeys.length) {
      ledgerEntryUniqueHits.inc(entryKeys.length - (result.rowCount ?? 0));
      throw new LedgerUniqueIndexHit(transfers.find((t) => t.legs.length > 0)?.transferKey ?? "");
    }
  } catch (error) {
    if (sqlState(error) === "23505") {
      ledgerEntryUniqueHits.inc();
      throw new LedgerUniqueIndexHit(transfers[0]?.transferKey ?? "");
    }
    throw error;
  }
}

