import type { Tx } from "../db/transaction.ts";

/**
 * Both sides of one run staged in temporary tables of the run's transaction (dropped at commit),
 * so that exact matches are found by a join in PostgreSQL and only what is left is read into
 * memory (docs/decisions/0027, "set-based matching"). The references, unnested from these rows by
 * set-matching.ts (not staged as tables of their own: docs/decisions/0027, "run cost"), are the same as sides.ts
 * gives the in-memory matcher: their reference values without the tag (never their own entry ids,
 * svcr/ntry), and for our transfers the transfer key, the payment's client_reference, the record's
 * natural key and its link ids without their tag.
 *
 *   recon_theirs (item_key, booking_date, direction, amount_minor, signed_minor, currency, status, duplicate_of, refs, parts, description)
 *   recon_ours (transfer_key, value_date, signed_minor, currency, client_reference, natural_key, link_id1, link_id2)
 */
export async function stageSides(tx: Tx, tenantId: string, accountId: string, from: string, to: string): Promise<{ theirs: number; ours: number }> {
  const theirs = await tx.query(
    `CREATE TEMP TABLE recon_theirs ON COMMIT DROP AS
     SELECT item_key, booking_date, direction, amount_minor, CASE direction WHEN 'C' THEN amount_minor ELSE -amount_minor END AS signed_minor, currency, status, duplicate_of, refs, parts, description
       FROM recon_external_item WHERE tenant_id = $1 AND account_id = $2 AND booking_date BETWEEN $3::date AND $4::date`,
    [tenantId, accountId, from, to],
  );
  const ours = await tx.query(
    `CREATE TEMP TABLE recon_ours ON COMMIT DROP AS
     WITH moved AS (
       SELECT e.transfer_key, min(e.value_date) AS value_date, min(e.currency) AS currency,
              sum(CASE e.direction WHEN 'D' THEN e.amount_minor ELSE -e.amount_minor END)::bigint AS signed_minor
         FROM ledger_entry e
        WHERE e.tenant_id = $1 AND e.account_id = $2 AND e.value_date BETWEEN $3::date AND $4::date
        GROUP BY e.transfer_key
     )
     SELECT m.transfer_key, m.value_date, m.signed_minor, m.currency, p.client_reference, k.natural_key, k.link_id1, k.link_id2
       FROM moved m
       JOIN transfer t ON t.tenant_id = $1 AND t.transfer_key = m.transfer_key
       LEFT JOIN payment p ON p.tenant_id = $1 AND p.transfer_key = m.transfer_key
       LEFT JOIN ingest_record_key k ON k.tenant_id = $1 AND k.transfer_key = m.transfer_key
      WHERE t.kind <> 'recon_correction' AND m.signed_minor <> 0
        -- A posting and its compensation both in the period cancel out in our books: the bank
        -- never saw either (a corrected record's replacement stands for it).
        AND NOT EXISTS (SELECT 1 FROM compensation c JOIN moved pair ON pair.transfer_key = c.compensation_key
                         WHERE c.tenant_id = $1 AND c.compensated_key = m.transfer_key)
        AND NOT EXISTS (SELECT 1 FROM compensation c JOIN moved pair ON pair.transfer_key = c.compensated_key
                         WHERE c.tenant_id = $1 AND c.compensation_key = m.transfer_key)`,
    [tenantId, accountId, from, to],
  );
  // Temporary tables are never analyzed by autovacuum: without statistics the joins of
  // set-matching.ts are planned blind. Only the join keys: the arrays and texts cost most to sample.
  await tx.query("ANALYZE recon_theirs (item_key, booking_date), recon_ours (transfer_key, value_date)");
  return { theirs: theirs.rowCount ?? 0, ours: ours.rowCount ?? 0 };
}

/**
 * The run's identity over its inputs: every item of theirs (key, signed amount, status, date) and
 * every transfer of ours (key, signed amount, value date), each side sorted, digested in the
 * database so that no side is read whole into memory for it.
 */
export async function stagedDigests(tx: Tx): Promise<{ theirs: string; ours: string }> {
  const { rows } = await tx.query<{ theirs: string | null; ours: string | null }>(
    `SELECT (SELECT encode(sha256(string_agg(convert_to(s, 'UTF8'), '\\x00'::bytea ORDER BY s COLLATE "C")), 'hex')
               FROM (SELECT item_key || '=' || signed_minor || ':' || CASE status WHEN 'pending' THEN 'p' ELSE 'b' END || ':' || to_char(booking_date, 'YYYY-MM-DD') AS s FROM recon_theirs) t) AS theirs,
            (SELECT encode(sha256(string_agg(convert_to(s, 'UTF8'), '\\x00'::bytea ORDER BY s COLLATE "C")), 'hex')
               FROM (SELECT DISTINCT transfer_key || '=' || signed_minor || ':' || to_char(value_date, 'YYYY-MM-DD') AS s FROM recon_ours) o) AS ours`,
  );
  return { theirs: rows[0]?.theirs ?? "", ours: rows[0]?.ours ?? "" };
}
