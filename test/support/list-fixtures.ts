import type { Pool } from "../../src/db/pool.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import { postTransfers, type Transfer } from "../../src/ledger/index.ts";
import { transferOf } from "./ledger-fixtures.ts";

/**
 * Many rows of one list at once, set-based (one statement each), for the tests that page through
 * 10,000 items of an HTTP list: creating them one by one through the service is not what those
 * tests are about. Each row's creation time is `from` plus a millisecond for every third row, so
 * rows share times and the id decides their order among equals. Ids are `${prefix}${00001...}`.
 */
export interface FixtureRows {
  tenantId: string;
  prefix: string;
  count: number;
  /** The first row's creation time (SQL timestamptz text); default an hour ago. */
  from?: string;
}

const timeOf = (g: string, from: string | undefined) =>
  `(coalesce(${from === undefined ? "NULL" : `'${from}'`}::timestamptz, now() - interval '1 hour')`
  + ` + (${g} / 3) * interval '1 millisecond')`;
const idOf = (prefix: string, g: string) => `'${prefix}' || lpad(${g}::text, 5, '0')`;

/** The ids the rows get, in order. */
export function fixtureIds(rows: Pick<FixtureRows, "prefix" | "count">, first = 1): string[] {
  return Array.from({ length: rows.count }, (_, i) => `${rows.prefix}${String(first + i).padStart(5, "0")}`);
}

/** Payments: every tenth declined. */
export async function insertPayments(pool: Pool, rows: FixtureRows): Promise<string[]> {
  await pool.query(
    `INSERT INTO payment (tenant_id, payment_id, client_reference, status, amount_minor, currency,
                          debtor_account, creditor_account, created_at)
     SELECT $1, ${idOf(rows.prefix, "g")}, 'ref-' || ${idOf(rows.prefix, "g")},
            CASE WHEN g % 10 = 0 THEN 'declined' ELSE 'succeeded' END, 100 + g, 'USD',
            'alice', 'bob', ${timeOf("g", rows.from)}
       FROM generate_series(1, $2::int) g`,
    [rows.tenantId, rows.count]);
  return fixtureIds(rows);
}

/** Refunds of one payment (made here): every tenth declined. */
export async function insertRefunds(pool: Pool, rows: FixtureRows & { paymentId: string }): Promise<string[]> {
  await pool.query(
    `INSERT INTO payment (tenant_id, payment_id, client_reference, status, amount_minor, currency,
                          debtor_account, creditor_account)
     VALUES ($1, $2, 'ref-' || $2, 'succeeded', 1000000000, 'USD', 'alice', 'bob')
     ON CONFLICT DO NOTHING`,
    [rows.tenantId, rows.paymentId]);
  await pool.query(
    `INSERT INTO refund (tenant_id, refund_id, client_reference, payment_id, status, amount_minor,
                         currency, created_at)
     SELECT $1, ${idOf(rows.prefix, "g")}, 'ref-' || ${idOf(rows.prefix, "g")}, $3,
            CASE WHEN g % 10 = 0 THEN 'declined' ELSE 'succeeded' END, 1, 'USD',
            ${timeOf("g", rows.from)}
       FROM generate_series(1, $2::int) g`,
    [rows.tenantId, rows.count, rows.paymentId]);
  return fixtureIds(rows);
}

/** Received files of one partner: every tenth rejected, the rest done; every other one by SFTP. */
export async function insertFiles(pool: Pool, rows: FixtureRows & { partnerId: string }): Promise<string[]> {
  await pool.query(
    `INSERT INTO received_file (tenant_id, file_id, partner_id, source, original_name, size_bytes,
                                bytes_sha256, status, received_at)
     SELECT $1, ${idOf(rows.prefix, "g")}, $3,
            CASE WHEN g % 2 = 0 THEN 'sftp' ELSE 'http' END, 'f' || g || '.ach', 94,
            md5(g::text), CASE WHEN g % 10 = 0 THEN 'rejected' ELSE 'done' END,
            ${timeOf("g", rows.from)}
       FROM generate_series(1, $2::int) g`,
    [rows.tenantId, rows.count, rows.partnerId]);
  return fixtureIds(rows);
}

/** Records of a file, indexes `first`.. : every tenth a duplicate, the rest applied. */
export async function insertFileRecords(
  pool: Pool, records: { tenantId: string; fileId: string; first: number; count: number },
): Promise<number[]> {
  await pool.query(
    `INSERT INTO record_outcome (tenant_id, file_id, record_index, position, natural_key, outcome,
                                 kind, amount_minor, currency)
     SELECT $1, $2, g, 'line ' || (g + 2), 'ach:fixture:' || g,
            CASE WHEN g % 10 = 0 THEN 'duplicate' ELSE 'applied' END, 'credit', 100 + g, 'USD'
       FROM generate_series($3::int, $3::int + $4::int - 1) g`,
    [records.tenantId, records.fileId, records.first, records.count]);
  return Array.from({ length: records.count }, (_, i) => records.first + i);
}

/** Open review items of one partner's file: every tenth a suspect, the rest conflicts. */
export async function insertReviews(
  pool: Pool, rows: FixtureRows & { partnerId: string; fileId: string },
): Promise<string[]> {
  await pool.query(
    // The items of one file take record indexes from 1, as a file's held records do.
    `INSERT INTO record_review (tenant_id, review_id, reason, natural_key, fingerprint, file_id,
                                record_index, partner_id, record, created_at)
     SELECT $1, ${idOf(rows.prefix, "g")}, CASE WHEN g % 10 = 0 THEN 'suspect' ELSE 'conflict' END,
            'ach:review:' || ${idOf(rows.prefix, "g")}, md5(g::text), $4, g, $3,
            jsonb_build_object('record', jsonb_build_object('kind', 'credit', 'amount', '100',
              'currency', 'USD', 'valueDate', '2026-12-05')),
            ${timeOf("g", rows.from)}
       FROM generate_series(1, $2::int) g`,
    [rows.tenantId, rows.count, rows.partnerId, rows.fileId]);
  return fixtureIds(rows);
}

/** Open reconciliation differences of a settlement account: every tenth ours_only. */
export async function insertDifferences(
  pool: Pool, rows: FixtureRows & { accountId: string },
): Promise<string[]> {
  await pool.query(
    `INSERT INTO recon_difference (tenant_id, difference_id, account_id, reason, first_run_id,
                                   last_run_id, delta_minor, currency, first_seen_at)
     SELECT $1, ${idOf(rows.prefix, "g")}, $3,
            CASE WHEN g % 10 = 0 THEN 'ours_only' ELSE 'theirs_only' END, 'run-fixture',
            'run-fixture', g, 'USD', ${timeOf("g", rows.from)}
       FROM generate_series(1, $2::int) g`,
    [rows.tenantId, rows.count, rows.accountId]);
  return fixtureIds(rows);
}

/**
 * Transfers from `from` to `to` posted through the ledger's front door, `perTransaction` in each
 * transaction (one batch of postTransfers each), keys `${prefix}00001`..: a list of them follows
 * the posting transactions, then the keys.
 */
export async function postFixtureTransfers(
  pool: Pool, rows: { tenantId: string; prefix: string; count: number; perTransaction: number },
  extra: Partial<Transfer> = {},
): Promise<string[]> {
  const keys = fixtureIds(rows);
  for (let start = 0; start < keys.length; start += rows.perTransaction) {
    const batch = keys.slice(start, start + rows.perTransaction)
      .map((key) => ({ transfer: transferOf(rows.tenantId, key, "bank-a", "bank-b", 100n, extra) }));
    const posted = await withTransaction(pool, (tx) => postTransfers(tx, batch));
    for (const { outcome } of posted) if (!outcome.ok) throw new Error(outcome.error.message);
  }
  return keys;
}
