import { unresolvedCounterpartyPosting } from "../records/index.ts";
import type { Queryable } from "../db/pool.ts";
import type { Tx } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import {
  findAccounts, postTransfer, storedTransfers, type Leg, type Transfer,
} from "../ledger/index.ts";

/**
 * Moving a record's money out of suspense (docs/decisions/0026). A record whose counterparty
 * matched no alias was posted to the partner's suspense account. The move mirrors every suspense
 * leg of that posting: the opposite leg on suspense, the same leg on the account the operator
 * names. A credit that went D settlement / C suspense 120.00 is moved as D suspense / C target
 * 120.00: suspense back to zero for it, the target credited as the record meant. One keyed
 * transfer, `<posting key>:suspense-move`, kind `suspense-move`, source_ref
 * `suspense-move:<operator id>`; the reason and the operator in `suspense_move`.
 */
export interface SuspenseMove {
  posting_key: string;
  move_key: string;
  target_account: string;
  amount_minor: string;
  currency: string;
  reason: string;
  decided_by: string;
  decided_at: string;
}

export interface SuspensePosting { transferKey: string; amountMinor: bigint; currency: string; valueDate: string; suspenseLegs: Leg[] }

export async function suspensePosting(db: Queryable, tenantId: string, transferKey: string): Promise<SuspensePosting | undefined> {
  const row = await unresolvedCounterpartyPosting(db, tenantId, transferKey);
  if (!row) return undefined;
  const stored = (await storedTransfers(db, tenantId, [transferKey])).get(transferKey);
  if (!stored) return undefined;
  const accountIds = [...new Set([...stored.entries.values()].map((entry) => entry.account_id))];
  const accounts = await findAccounts(db, tenantId, accountIds);
  const suspenseIds = new Set([...accounts.values()]
    .filter((account) => account.kind === "suspense").map((account) => account.accountId));
  const suspenseLegs = [...stored.entries.values()].filter((entry) => suspenseIds.has(entry.account_id))
    .map((entry) => ({ accountId: entry.account_id, direction: entry.direction as Leg["direction"], amountMinor: BigInt(entry.amount_minor), currency: entry.currency }));
  return { transferKey, amountMinor: BigInt(row.amount_minor), currency: row.currency, valueDate: stored.valueDate, suspenseLegs };
}

async function storedMove(db: Queryable, tenantId: string, postingKey: string): Promise<SuspenseMove | undefined> {
  const { rows } = await db.query<SuspenseMove>(
    `SELECT posting_key, move_key, target_account, amount_minor::text, currency, reason, decided_by, to_char(decided_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS decided_at
      FROM suspense_move WHERE tenant_id = $1 AND posting_key = $2`, [tenantId, postingKey]);
  return rows[0];
}

/** Posts the move (or answers the stored one for a repeat to the same account); nothing posted on a refusal. */
export async function moveOutOfSuspense(tx: Tx, input: { tenantId: string; posting: SuspensePosting; targetAccount: string; reason: string; decidedBy: string; operatorId: string }): Promise<Result<SuspenseMove, Finding>> {
  const { posting } = input;
  const flip = (direction: Leg["direction"]): Leg["direction"] => (direction === "D" ? "C" : "D");
  const legs: Leg[] = posting.suspenseLegs.flatMap((leg) => [
    { ...leg, direction: flip(leg.direction) },
    { ...leg, accountId: input.targetAccount },
  ]);
  const transfer: Transfer = {
    tenantId: input.tenantId, transferKey: `${posting.transferKey}:suspense-move`, kind: "suspense-move", valueDate: posting.valueDate,
    sourceRef: `suspense-move:${input.operatorId}`, legs,
  };
  const posted = await postTransfer(tx, transfer);
  if (!posted.ok) return fail(posted.error);
  if (posted.value !== "applied") {
    const earlier = await storedMove(tx, input.tenantId, posting.transferKey);
    if (posted.value === "exists" && earlier) return ok(earlier);
    return fail(finding("SUSPENSE_MOVED", `${posting.transferKey} was moved out of suspense to ${earlier?.target_account ?? "another account"} by ${earlier?.decided_by ?? "someone"}`, { field: "to_account" }));
  }
  await tx.query(`INSERT INTO suspense_move (tenant_id, posting_key, move_key, target_account, amount_minor, currency, reason, decided_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [input.tenantId, posting.transferKey, transfer.transferKey, input.targetAccount, posting.amountMinor.toString(), posting.currency, input.reason, input.decidedBy]);
  const move = await storedMove(tx, input.tenantId, posting.transferKey);
  if (!move) throw new Error(`suspense move of ${posting.transferKey} vanished inside its own transaction`);
  return ok(move);
}

/** The moves of these suspense postings, by posting key (a moved line shows where it went). */
export async function suspenseMovesOf(
  db: Queryable, tenantId: string, postingKeys: readonly string[],
): Promise<Map<string, SuspenseMove>> {
  if (postingKeys.length === 0) return new Map();
  const { rows } = await db.query<SuspenseMove>(
    `SELECT posting_key, move_key, target_account, amount_minor::text, currency, reason,
            decided_by,
            to_char(decided_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS decided_at
       FROM suspense_move
      WHERE tenant_id = $1 AND posting_key = ANY($2::text[])`,
    [tenantId, [...new Set(postingKeys)]],
  );
  return new Map(rows.map((r) => [r.posting_key, r]));
}
