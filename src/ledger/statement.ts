import type { Queryable } from "../db/pool.ts";
import { minorToDecimal } from "../protocols/iso4217/currency.ts";
import type { Balance } from "./balance.ts";
import type { Direction, Leg } from "./transfer.ts";

/**
 * Ledger reads for people and for corrections: an account's statement (its entries in order,
 * each with the transfer's key, kind and origin) and one posted transfer with its legs (what a
 * compensation mirrors). Read-only; the posting path stays in post-transfer*.ts.
 */

/** How a statement names a transfer's kind: technical corrections never look like refunds or returns. */
export type StatementCategory = "technical_correction" | "reconciliation_correction" | "refund" | "return" | "posting";

export function categoryOfKind(kind: string): StatementCategory {
  if (kind.startsWith("correction-")) return "technical_correction";
  if (kind === "recon_correction") return "reconciliation_correction";
  if (kind === "refund") return "refund";
  if (kind.endsWith("-return")) return "return";
  return "posting";
}

export interface StatementLine {
  entryKey: string;
  transferKey: string;
  kind: string;
  category: StatementCategory;
  sourceRef: string | null;
  direction: Direction;
  amountMinor: bigint;
  currency: string;
  valueDate: string;
  /** Its transfer's (docs/decisions/0101); the value date when the transfer predates 0035. */
  settlementDate: string;
  settlementDateRecorded: boolean;
  createdAt: string;
}

export interface Statement {
  lines: StatementLine[];
  /** More entries exist before the first line listed. */
  truncated: boolean;
}

/**
 * The account's latest `entriesMax` entries, oldest first: by the start time of the transaction
 * that wrote them, then by entry key (the entries of one transaction commit together, so their
 * order among themselves carries no meaning; a transfer's legs stay together).
 */
export async function accountStatement(db: Queryable, tenantId: string, accountId: string, entriesMax: number): Promise<Statement> {
  const { rows } = await db.query<{
    entry_key: string; transfer_key: string; kind: string; source_ref: string | null; direction: Direction;
    amount_minor: bigint; currency: string; value_date: string; created_at: Date;
    settlement_date: string; settlement_date_recorded: boolean;
  }>(
    `SELECT e.entry_key, e.transfer_key, t.kind, t.source_ref, e.direction, e.amount_minor, e.currency,
            to_char(e.value_date, 'YYYY-MM-DD') AS value_date, e.created_at,
            to_char(coalesce(t.settlement_date, t.value_date), 'YYYY-MM-DD') AS settlement_date,
            t.settlement_date IS NOT NULL AS settlement_date_recorded
       FROM ledger_entry e JOIN transfer t ON t.tenant_id = e.tenant_id AND t.transfer_key = e.transfer_key
      WHERE e.tenant_id = $1 AND e.account_id = $2
      ORDER BY e.created_at DESC, e.entry_key DESC LIMIT $3`,
    [tenantId, accountId, entriesMax + 1],
  );
  const truncated = rows.length > entriesMax;
  const lines = rows.slice(0, entriesMax).reverse().map((r) => ({
    entryKey: r.entry_key, transferKey: r.transfer_key, kind: r.kind, category: categoryOfKind(r.kind), sourceRef: r.source_ref,
    direction: r.direction, amountMinor: BigInt(r.amount_minor), currency: r.currency, valueDate: r.value_date, createdAt: r.created_at.toISOString(),
    settlementDate: r.settlement_date, settlementDateRecorded: r.settlement_date_recorded,
  }));
  return { lines, truncated };
}

export interface PostedTransfer {
  tenantId: string;
  transferKey: string;
  kind: string;
  valueDate: string;
  settlementDate: string;   // the value date for a transfer posted before 0035 (0101)
  sourceRef: string | null;
  legs: Leg[];
}

/** A posted transfer with its legs in entry order, or undefined when the key was never posted. */
export async function postedTransfer(db: Queryable, tenantId: string, transferKey: string): Promise<PostedTransfer | undefined> {
  const head = await db.query<{
    kind: string; value_date: string; settlement_date: string; source_ref: string | null;
  }>(
    `SELECT kind, to_char(value_date, 'YYYY-MM-DD') AS value_date, source_ref,
            to_char(coalesce(settlement_date, value_date), 'YYYY-MM-DD') AS settlement_date
       FROM transfer WHERE tenant_id = $1 AND transfer_key = $2`,
    [tenantId, transferKey]);
  const row = head.rows[0];
  if (!row) return undefined;
  const entries = await db.query<{ account_id: string; direction: Direction; amount_minor: bigint; currency: string }>(
    // entry keys are `<transfer key>#<leg index>`: ordered by index, not as text (#10 before #2)
    `SELECT account_id, direction, amount_minor, currency FROM ledger_entry WHERE tenant_id = $1 AND transfer_key = $2
      ORDER BY length(entry_key), entry_key`,
    [tenantId, transferKey]);
  return {
    tenantId, transferKey, kind: row.kind, valueDate: row.value_date, sourceRef: row.source_ref,
    settlementDate: row.settlement_date,
    legs: entries.rows.map((e) => ({ accountId: e.account_id, direction: e.direction, amountMinor: BigInt(e.amount_minor), currency: e.currency })),
  };
}

/** An account's statement as published (HTTP and `clearline statement --json`): amounts as decimal strings. */
export function statementDocument(balance: Balance, statement: Statement): Record<string, unknown> {
  return {
    account: balance.accountId,
    kind: balance.kind,
    currency: balance.currency,
    balance: minorToDecimal(balance.balanceMinor, balance.currency),
    truncated: statement.truncated,
    entries: statement.lines.map((line) => ({
      entry_key: line.entryKey,
      transfer_key: line.transferKey,
      kind: line.kind,
      category: line.category,
      origin: line.sourceRef,
      direction: line.direction === "D" ? "debit" : "credit",
      amount: minorToDecimal(line.amountMinor, line.currency),
      currency: line.currency,
      value_date: line.valueDate,
      settlement_date: line.settlementDate,
      settlement_date_recorded: line.settlementDateRecorded,
      created_at: line.createdAt,
    })),
  };
}
