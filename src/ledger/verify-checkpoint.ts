import type { Tx } from "../db/transaction.ts";
import type { VerifyProblem } from "./verify-problem.ts";

/**
 * Verification checkpoints (migration 0031, docs/decisions/0089). A checkpoint of a tenant says:
 * every transfer whose writing transaction is visible in `snapshot` was verified, and the sums
 * of those transfers' entries per account are the rows of ledger_verify_account. Everything here
 * runs inside the verify run's REPEATABLE READ transaction, so each statement sees one snapshot.
 */

/** The snapshot of a tenant without a checkpoint: no transaction id is visible in it. */
const NOTHING_VERIFIED = "1:1:";

/**
 * verify_fresh: the entries of every transfer not visible in its tenant's latest checkpoint (a
 * row with no account for such a transfer without entries). The transfers are found by the index
 * on (tenant_id, xact_id) from the checkpoint's xmin up, and each one's entries by a probe of
 * ledger_entry_transfer (LATERAL behind OFFSET 0: the planner cannot know how few they are and
 * would otherwise scan every entry). `checkpointedOnly`: tenants without a checkpoint left out.
 */
export async function collectFreshEntries(tx: Tx, checkpointedOnly: boolean): Promise<void> {
  await tx.query("DROP TABLE IF EXISTS pg_temp.verify_fresh");
  await tx.query(`
    CREATE TEMP TABLE verify_fresh ON COMMIT DROP AS
    SELECT tn.tenant_id, f.transfer_key, e.account_id, e.direction, e.amount_minor, e.currency,
           e.value_date
      FROM (SELECT DISTINCT tenant_id FROM account) tn
      ${checkpointedOnly ? "" : "LEFT"} JOIN LATERAL (
        SELECT c.snapshot FROM ledger_verify_checkpoint c
         WHERE c.tenant_id = tn.tenant_id
         ORDER BY c.checkpoint_no DESC LIMIT 1) c ON true
     CROSS JOIN LATERAL (
        SELECT t.transfer_key FROM transfer t
         WHERE t.tenant_id = tn.tenant_id
           AND t.xact_id >= pg_snapshot_xmin(coalesce(c.snapshot, '${NOTHING_VERIFIED}'))
           AND NOT pg_visible_in_snapshot(t.xact_id, coalesce(c.snapshot, '${NOTHING_VERIFIED}'))
        OFFSET 0) f
      LEFT JOIN LATERAL (
        SELECT e.account_id, e.direction, e.amount_minor, e.currency, e.value_date
          FROM ledger_entry e
         WHERE e.tenant_id = tn.tenant_id AND e.transfer_key = f.transfer_key
        OFFSET 0) e ON true`);
  await tx.query("ANALYZE verify_fresh");
}

/** The sums per account of verify_fresh, as a subquery. */
const FRESH_SUMS = `(
  SELECT tenant_id, account_id, count(*) AS entries,
         coalesce(sum(amount_minor) FILTER (WHERE direction = 'D'), 0)::numeric AS debits,
         coalesce(sum(amount_minor) FILTER (WHERE direction = 'C'), 0)::numeric AS credits
    FROM verify_fresh WHERE account_id IS NOT NULL
   GROUP BY tenant_id, account_id)`;

/** Each tenant's latest checkpoint, as a subquery. */
const LATEST_CHECKPOINT = `(
  SELECT DISTINCT ON (tenant_id) tenant_id, checkpoint_no, snapshot, transfers, entries
    FROM ledger_verify_checkpoint ORDER BY tenant_id, checkpoint_no DESC)`;

export async function checkpointedTenants(tx: Tx): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${LATEST_CHECKPOINT} c`);
  return rows[0]?.n ?? 0;
}

export interface FreshCounts { transfers: number; entries: number }

export async function freshCounts(tx: Tx): Promise<FreshCounts> {
  const { rows } = await tx.query<{ transfers: number; entries: number }>(
    `SELECT count(DISTINCT (tenant_id, transfer_key))::int AS transfers,
            count(account_id)::int AS entries
       FROM verify_fresh`);
  return { transfers: rows[0]?.transfers ?? 0, entries: rows[0]?.entries ?? 0 };
}

/** Transfers among the fresh ones with fewer than two legs, or unbalanced in a currency. */
export async function unbalancedFreshTransfers(
  tx: Tx, problemsMax: number,
): Promise<VerifyProblem[]> {
  const { rows } = await tx.query<{ tenant_id: string; transfer_key: string; detail: string }>(
    `SELECT tenant_id, transfer_key,
            coalesce(string_agg(currency || ' D' || debits || ' C' || credits, ', ')
                     FILTER (WHERE currency IS NOT NULL), 'no entries') AS detail
       FROM (SELECT tenant_id, transfer_key, currency,
                    coalesce(sum(amount_minor) FILTER (WHERE direction = 'D'), 0) AS debits,
                    coalesce(sum(amount_minor) FILTER (WHERE direction = 'C'), 0) AS credits,
                    count(account_id) AS legs
               FROM verify_fresh GROUP BY tenant_id, transfer_key, currency) s
      GROUP BY tenant_id, transfer_key
     HAVING sum(legs) < 2 OR bool_or(debits <> credits)
      ORDER BY 1, 2 LIMIT $1`,
    [problemsMax],
  );
  return rows.map((row) => ({
    code: "LEDGER_TRANSFER_UNBALANCED_STORED", tenantId: row.tenant_id,
    transferKey: row.transfer_key,
    message: `transfer ${row.transfer_key} does not balance: ${row.detail}`,
  }));
}

interface AccountRow {
  tenant_id: string; account_id: string; kind: string | null;
  projected_debits: string; projected_credits: string; debits: string; credits: string;
}

/**
 * Every account's balance as read (folded sums plus delta rows) against its sums at the
 * checkpoint plus its fresh entries, and no customer account below zero by those sums: one row
 * per account, whatever its history, plus the fresh entries.
 */
export async function freshAccountProblems(tx: Tx, problemsMax: number): Promise<VerifyProblem[]> {
  const { rows } = await tx.query<AccountRow>(
    `WITH expected AS (
       SELECT coalesce(k.tenant_id, f.tenant_id) AS tenant_id,
              coalesce(k.account_id, f.account_id) AS account_id,
              coalesce(k.debits_minor, 0) + coalesce(f.debits, 0) AS debits,
              coalesce(k.credits_minor, 0) + coalesce(f.credits, 0) AS credits
         FROM ledger_verify_account k
         FULL JOIN ${FRESH_SUMS} f ON f.tenant_id = k.tenant_id AND f.account_id = k.account_id
     ), projected AS (
       SELECT tenant_id, account_id, sum(debits_minor) AS debits, sum(credits_minor) AS credits
         FROM (SELECT tenant_id, account_id, debits_minor, credits_minor FROM account_balance
               UNION ALL
               SELECT tenant_id, account_id, debits_minor, credits_minor FROM balance_delta) parts
        GROUP BY tenant_id, account_id
     )
     SELECT coalesce(p.tenant_id, x.tenant_id) AS tenant_id,
            coalesce(p.account_id, x.account_id) AS account_id, a.kind,
            coalesce(p.debits, 0)::text AS projected_debits,
            coalesce(p.credits, 0)::text AS projected_credits,
            coalesce(x.debits, 0)::text AS debits, coalesce(x.credits, 0)::text AS credits
       FROM projected p
       FULL JOIN expected x ON x.tenant_id = p.tenant_id AND x.account_id = p.account_id
       LEFT JOIN account a ON a.tenant_id = coalesce(p.tenant_id, x.tenant_id)
                          AND a.account_id = coalesce(p.account_id, x.account_id)
      WHERE coalesce(p.debits, 0) <> coalesce(x.debits, 0)
         OR coalesce(p.credits, 0) <> coalesce(x.credits, 0)
         OR (a.kind = 'customer' AND coalesce(x.credits, 0) < coalesce(x.debits, 0))
      ORDER BY 1, 2 LIMIT $1`,
    [problemsMax],
  );
  return rows.map(accountProblem);
}

function accountProblem(row: AccountRow): VerifyProblem {
  const projected = `projection D${row.projected_debits} C${row.projected_credits}`;
  if (row.projected_debits !== row.debits || row.projected_credits !== row.credits) {
    return {
      code: "LEDGER_PROJECTION_MISMATCH", tenantId: row.tenant_id, accountId: row.account_id,
      message: `account ${row.account_id}: ${projected}, entries D${row.debits} C${row.credits}`,
    };
  }
  const balance = (BigInt(row.credits) - BigInt(row.debits)).toString();
  return {
    code: "LEDGER_NEGATIVE_CUSTOMER_BALANCE", tenantId: row.tenant_id, accountId: row.account_id,
    message: `customer account ${row.account_id} is negative: ${balance}`,
  };
}

/**
 * The nets kept for settlement accounts (settlement_transfer_net) against the fresh entries:
 * one primary-key probe per (settlement account, value date, fresh transfer) with entries.
 */
export async function freshSettlementNetProblems(
  tx: Tx, problemsMax: number,
): Promise<VerifyProblem[]> {
  const { rows } = await tx.query<{
    tenant_id: string; account_id: string; transfer_key: string;
    kept: string | null; entries: string;
  }>(
    `SELECT g.tenant_id, g.account_id, g.transfer_key, n.signed_minor::text AS kept,
            g.signed_minor::text AS entries
       FROM (SELECT f.tenant_id, f.account_id, f.value_date, f.transfer_key,
                    sum(CASE f.direction WHEN 'D' THEN f.amount_minor ELSE -f.amount_minor END)
                      AS signed_minor
               FROM verify_fresh f
               JOIN account a ON a.tenant_id = f.tenant_id AND a.account_id = f.account_id
              WHERE a.kind = 'settlement'
              GROUP BY f.tenant_id, f.account_id, f.value_date, f.transfer_key) g
       LEFT JOIN LATERAL (
         SELECT n.signed_minor FROM settlement_transfer_net n
          WHERE n.tenant_id = g.tenant_id AND n.account_id = g.account_id
            AND n.value_date = g.value_date AND n.transfer_key = g.transfer_key OFFSET 0) n ON true
      WHERE n.signed_minor IS DISTINCT FROM g.signed_minor
      ORDER BY 1, 2, 3 LIMIT $1`,
    [problemsMax],
  );
  return rows.map((row) => ({
    code: "LEDGER_SETTLEMENT_NET_MISMATCH", tenantId: row.tenant_id, accountId: row.account_id,
    transferKey: row.transfer_key,
    message: `settlement account ${row.account_id}, transfer ${row.transfer_key}: `
      + `net kept ${row.kept ?? "none"}, entries ${row.entries}`,
  }));
}

/**
 * The full run's check of each tenant's latest checkpoint: the sums of every entry (verify_truth)
 * less those of the entries new since it (verify_fresh) must be the stored sums per account, and
 * the tenant's transfers and entries less the new ones its stored totals. A changed or inserted
 * old entry, or a changed checkpoint, makes them differ.
 */
export async function checkpointProblems(tx: Tx, problemsMax: number): Promise<VerifyProblem[]> {
  const accounts = await tx.query<{ tenant_id: string; account_id: string; detail: string }>(
    `WITH at_checkpoint AS (
       SELECT t.tenant_id, t.account_id, t.entries - coalesce(f.entries, 0) AS entries,
              t.debits - coalesce(f.debits, 0) AS debits,
              t.credits - coalesce(f.credits, 0) AS credits
         FROM verify_truth t
         JOIN ${LATEST_CHECKPOINT} c ON c.tenant_id = t.tenant_id
         LEFT JOIN ${FRESH_SUMS} f ON f.tenant_id = t.tenant_id AND f.account_id = t.account_id
     )
     SELECT coalesce(k.tenant_id, x.tenant_id) AS tenant_id,
            coalesce(k.account_id, x.account_id) AS account_id,
            'checkpoint ' || coalesce(k.checkpoint_no::text, 'none') || ' holds '
              || coalesce(k.entries, 0) || ' entries D' || coalesce(k.debits_minor, 0)
              || ' C' || coalesce(k.credits_minor, 0) || ', the entries visible to it are '
              || coalesce(x.entries, 0) || ' D' || coalesce(x.debits, 0)
              || ' C' || coalesce(x.credits, 0) AS detail
       FROM ledger_verify_account k
       FULL JOIN at_checkpoint x ON x.tenant_id = k.tenant_id AND x.account_id = k.account_id
      WHERE coalesce(k.entries, 0) <> coalesce(x.entries, 0)
         OR coalesce(k.debits_minor, 0) <> coalesce(x.debits, 0)
         OR coalesce(k.credits_minor, 0) <> coalesce(x.credits, 0)
      ORDER BY 1, 2 LIMIT $1`,
    [problemsMax],
  );
  const totals = await checkpointTotalsProblems(tx, problemsMax);
  return [
    ...accounts.rows.map((row): VerifyProblem => ({
      code: "LEDGER_CHECKPOINT_MISMATCH", tenantId: row.tenant_id, accountId: row.account_id,
      message: `account ${row.account_id}: ${row.detail}`,
    })),
    ...totals,
  ];
}

async function checkpointTotalsProblems(tx: Tx, problemsMax: number): Promise<VerifyProblem[]> {
  const { rows } = await tx.query<{ tenant_id: string; detail: string }>(
    `WITH counted AS (
       SELECT c.tenant_id, c.checkpoint_no,
              c.transfers AS kept_transfers, c.entries AS kept_entries,
              t.transfers - coalesce(f.transfers, 0) AS transfers,
              t.entries - coalesce(f.entries, 0) AS entries
         FROM ${LATEST_CHECKPOINT} c
         JOIN verify_totals t ON t.tenant_id = c.tenant_id
         LEFT JOIN ${FRESH_TOTALS} f ON f.tenant_id = c.tenant_id
     )
     SELECT tenant_id, 'checkpoint ' || checkpoint_no || ' holds ' || kept_transfers
              || ' transfers and ' || kept_entries || ' entries, the ledger has ' || transfers
              || ' and ' || entries || ' visible to it' AS detail
       FROM counted
      WHERE kept_transfers <> transfers OR kept_entries <> entries
      ORDER BY 1 LIMIT $1`,
    [problemsMax],
  );
  return rows.map((row) => ({
    code: "LEDGER_CHECKPOINT_MISMATCH", tenantId: row.tenant_id, message: row.detail,
  }));
}

/** Transfers and entries per tenant of verify_fresh, as a subquery. */
const FRESH_TOTALS = `(
  SELECT tenant_id, count(DISTINCT transfer_key) AS transfers, count(account_id) AS entries
    FROM verify_fresh GROUP BY tenant_id)`;

export interface Totals { tenants: number; transfers: number; entries: number }

/**
 * verify_totals: each tenant's transfers and entries as this run sees them. A full run counts
 * them (transfers by tenant, entries from verify_truth); an incremental one adds the fresh ones
 * to its latest checkpoint's.
 */
export async function collectTotals(tx: Tx, mode: "full" | "incremental"): Promise<Totals> {
  await tx.query("DROP TABLE IF EXISTS pg_temp.verify_totals");
  await tx.query(mode === "full"
    ? `CREATE TEMP TABLE verify_totals ON COMMIT DROP AS
       SELECT tn.tenant_id, coalesce(t.transfers, 0) AS transfers, coalesce(e.entries, 0) AS entries
         FROM (SELECT DISTINCT tenant_id FROM account) tn
         LEFT JOIN (SELECT tenant_id, count(*) AS transfers FROM transfer GROUP BY tenant_id) t
           ON t.tenant_id = tn.tenant_id
         LEFT JOIN (SELECT tenant_id, sum(entries) AS entries
                      FROM verify_truth GROUP BY tenant_id) e
           ON e.tenant_id = tn.tenant_id`
    : `CREATE TEMP TABLE verify_totals ON COMMIT DROP AS
       SELECT tn.tenant_id, coalesce(c.transfers, 0) + coalesce(f.transfers, 0) AS transfers,
              coalesce(c.entries, 0) + coalesce(f.entries, 0) AS entries
         FROM (SELECT DISTINCT tenant_id FROM account) tn
         LEFT JOIN ${LATEST_CHECKPOINT} c ON c.tenant_id = tn.tenant_id
         LEFT JOIN ${FRESH_TOTALS} f ON f.tenant_id = tn.tenant_id`);
  const { rows } = await tx.query<{ tenants: number; transfers: string; entries: string }>(
    `SELECT count(*)::int AS tenants, coalesce(sum(transfers), 0)::text AS transfers,
            coalesce(sum(entries), 0)::text AS entries
       FROM verify_totals`);
  const row = rows[0];
  return {
    tenants: row?.tenants ?? 0,
    transfers: Number(row?.transfers ?? 0),
    entries: Number(row?.entries ?? 0),
  };
}

/**
 * A new checkpoint for every tenant, at this transaction's snapshot, with verify_totals: after a
 * full run the sums are the truth's (verify_truth), after an incremental one the previous sums
 * plus the fresh ones. Written only when the whole run found nothing. A concurrent run that wrote
 * the same number first makes this one fail to serialize (REPEATABLE READ), and withTransaction
 * runs it again from that newer checkpoint. Returns how many tenants got one.
 */
export async function writeCheckpoints(tx: Tx, mode: "full" | "incremental"): Promise<number> {
  const written = await tx.query(
    `INSERT INTO ledger_verify_checkpoint (tenant_id, checkpoint_no, snapshot, mode,
                                           transfers, entries, new_transfers, new_entries)
     SELECT t.tenant_id, coalesce(c.checkpoint_no, 0) + 1, pg_current_snapshot(), $1,
            t.transfers, t.entries,
            t.transfers - coalesce(c.transfers, 0), t.entries - coalesce(c.entries, 0)
       FROM verify_totals t
       LEFT JOIN ${LATEST_CHECKPOINT} c ON c.tenant_id = t.tenant_id
      ORDER BY 1
     ON CONFLICT (tenant_id, checkpoint_no) DO NOTHING`,
    [mode],
  );
  await tx.query(mode === "full" ? WRITE_TRUTH_SUMS : WRITE_FRESH_SUMS);
  return written.rowCount ?? 0;
}

/** The accounts the fresh entries moved: previous sums plus theirs, under the new checkpoint. */
const WRITE_FRESH_SUMS = `
  INSERT INTO ledger_verify_account AS k (tenant_id, account_id, checkpoint_no, entries,
                                          debits_minor, credits_minor)
  SELECT f.tenant_id, f.account_id, c.checkpoint_no, f.entries, f.debits, f.credits
    FROM ${FRESH_SUMS} f
    JOIN ${LATEST_CHECKPOINT} c ON c.tenant_id = f.tenant_id
   ORDER BY 1, 2
  ON CONFLICT (tenant_id, account_id) DO UPDATE
     SET checkpoint_no = excluded.checkpoint_no, entries = k.entries + excluded.entries,
         debits_minor = k.debits_minor + excluded.debits_minor,
         credits_minor = k.credits_minor + excluded.credits_minor`;

/** Every account whose sums differ from the stored ones: the truth's, under the new checkpoint. */
const WRITE_TRUTH_SUMS = `
  INSERT INTO ledger_verify_account AS k (tenant_id, account_id, checkpoint_no, entries,
                                          debits_minor, credits_minor)
  SELECT t.tenant_id, t.account_id, c.checkpoint_no, t.entries, t.debits, t.credits
    FROM verify_truth t
    JOIN ${LATEST_CHECKPOINT} c ON c.tenant_id = t.tenant_id
   ORDER BY 1, 2
  ON CONFLICT (tenant_id, account_id) DO UPDATE
     SET checkpoint_no = excluded.checkpoint_no, entries = excluded.entries,
         debits_minor = excluded.debits_minor, credits_minor = excluded.credits_minor
   WHERE (k.entries, k.debits_minor, k.credits_minor)
         IS DISTINCT FROM (excluded.entries, excluded.debits_minor, excluded.credits_minor)`;
