import type { Queryable } from "../db/pool.ts";
import { sqlState, type Tx } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { ledgerEntryUniqueHits, ledgerTransfers } from "../observability/metrics.ts";
import { accountKinds, type AccountKind } from "./account-kinds.ts";
import { availableBalanceForUpdate } from "./balance.ts";
import { compareStored, storedTransfers } from "./stored-transfers.ts";
import { assertTransferWellFormed, entryKeyOf, type Transfer } from "./transfer.ts";

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

export class LedgerUniqueIndexHit extends Error {
  readonly code = "LEDGER_ENTRY_UNIQUE_INDEX_HIT";
  constructor(transferKey: string) {
    super(`ledger_entry unique index refused entries of new transfer ${transferKey}: an entry key collides upstream`);
  }
}

/**
 * Posts a balanced transfer inside the caller's transaction (so the caller's dedup mark commits
 * with it). The transfer row's primary key arbitrates concurrent posts of one key: the first
 * insert wins, the others wait for it and then see `exists`. Never check-then-act.
 */
export async function postTransfer(tx: Tx, transfer: Transfer): Promise<Result<PostOutcome, Finding>> {
  if (transfer.legs.length === 0) return fail(finding("LEDGER_TRANSFER_EMPTY", `transfer ${transfer.transferKey} has no legs`, { field: "legs" }));
  assertTransferWellFormed(transfer);

  const accountCheck = await checkAccounts(tx, transfer);
  if (!accountCheck.ok) return accountCheck;

  const funds = await checkFunds(tx, transfer, accountCheck.value);
  if (!funds.ok) {
    // A replay of a transfer that was applied when funds were there is still a replay.
    const existing = await compareExisting(tx, transfer);
    if (existing) return ok(recorded(existing));
    return funds;
  }

  const inserted = await tx.query(
    `INSERT INTO transfer (tenant_id, transfer_key, kind, value_date, source_ref)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant_id, transfer_key) DO NOTHING RETURNING transfer_key`,
    [transfer.tenantId, transfer.transferKey, transfer.kind, transfer.valueDate, transfer.sourceRef ?? null],
  );
  if (inserted.rowCount === 0) {
    const existing = await compareExisting(tx, transfer);
    // The row was there a moment ago and ledger rows are never deleted.
    if (!existing) throw new Error(`transfer ${transfer.transferKey} conflicted but cannot be read back`);
    return ok(recorded(existing));
  }

  await insertEntries(tx, transfer);
  return ok(recorded("applied"));
}

function recorded(outcome: PostOutcome): PostOutcome {
  ledgerTransfers.inc({ outcome });
  return outcome;
}

async function insertEntries(tx: Queryable, transfer: Transfer): Promise<void> {
  const legs = transfer.legs;
  try {
    const result = await tx.query(
      `INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
       SELECT $1, e.entry_key, $2, e.account_id, e.direction, e.amount_minor, e.currency, $3
         FROM unnest($4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[])
              AS e(entry_key, account_id, direction, amount_minor, currency)
       ON CONFLICT (tenant_id, entry_key) DO NOTHING`,
      [
        transfer.tenantId, transfer.transferKey, transfer.valueDate,
        legs.map((_, i) => entryKeyOf(transfer.transferKey, i)),
        legs.map((l) => l.accountId),
        legs.map((l) => l.direction),
        legs.map((l) => l.amountMinor.toString()),
        legs.map((l) => l.currency),
      ],
    );
    if (result.rowCount !== legs.length) {
      ledgerEntryUniqueHits.inc(legs.length - (result.rowCount ?? 0));
      throw new LedgerUniqueIndexHit(transfer.transferKey);
    }
  } catch (error) {
    if (sqlState(error) === "23505") {
      ledgerEntryUniqueHits.inc();
      throw new LedgerUniqueIndexHit(transfer.transferKey);
    }
    throw error;
  }
}

async function checkAccounts(tx: Queryable, transfer: Transfer): Promise<Result<Map<string, AccountKind>, Finding>> {
  const ids = [...new Set(transfer.legs.map((l) => l.accountId))];
  const { rows } = await tx.query<{ account_id: string; kind: AccountKind; currency: string }>(
    "SELECT account_id, kind, currency FROM account WHERE tenant_id = $1 AND account_id = ANY($2::text[])",
    [transfer.tenantId, ids],
  );
  const byId = new Map(rows.map((r) => [r.account_id, r]));
  const kinds = new Map<string, AccountKind>();
  for (const [index, leg] of transfer.legs.entries()) {
    const account = byId.get(leg.accountId);
    if (!account) return fail(finding("LEDGER_ACCOUNT_UNKNOWN", `account ${leg.accountId} does not exist`, { field: `legs[${index}].accountId` }));
    if (account.currency !== leg.currency) {
      return fail(finding("LEDGER_ACCOUNT_CURRENCY_MISMATCH", `leg in ${leg.currency} on account ${leg.accountId} held in ${account.currency}`, { field: `legs[${index}].currency` }));
    }
    kinds.set(leg.accountId, account.kind);
  }
  return ok(kinds);
}

/**
 * Accounts that may not go negative (customers) are locked in a fixed order before their
 * balance is read, so two concurrent debits of one customer cannot both see the same funds.
 */
async function checkFunds(tx: Queryable, transfer: Transfer, kinds: Map<string, AccountKind>): Promise<Result<true, Finding>> {
  const reducing = new Map<string, bigint>();
  for (const leg of transfer.legs) {
    const kind = kinds.get(leg.accountId);
    if (!kind || accountKinds[kind].mayGoNegative) continue;
    const delta = leg.direction === accountKinds[kind].normalSide ? leg.amountMinor : -leg.amountMinor;
    reducing.set(leg.accountId, (reducing.get(leg.accountId) ?? 0n) + delta);
  }
  for (const accountId of [...reducing.keys()].sort()) {
    const delta = reducing.get(accountId) ?? 0n;
    if (delta >= 0n) continue;
    const available = await availableBalanceForUpdate(tx, transfer.tenantId, accountId);
    if (available + delta < 0n) {
      return fail(finding("LEDGER_INSUFFICIENT_FUNDS", `account ${accountId} has insufficient funds`, { field: "amount" }));
    }
  }
  return ok(true);
}

async function compareExisting(tx: Queryable, transfer: Transfer): Promise<PostOutcome | undefined> {
  const stored = await storedTransfers(tx, transfer.tenantId, [transfer.transferKey]);
  return compareStored(transfer, stored.get(transfer.transferKey));
}
