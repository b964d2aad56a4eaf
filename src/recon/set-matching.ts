import type { Tx } from "../db/transaction.ts";
import type { MatchingRule, MatchingRules } from "./matching-rules.ts";

/**
 * Set-based matching in PostgreSQL for the leading exact one-to-one rules (reference equals),
 * before anything is read into memory (docs/decisions/0027). A pair is taken here only when the
 * in-memory matcher could not decide otherwise: the item names exactly one of our transfers and
 * that transfer is named by exactly one item that rules may match (booked, not a duplicate), and
 * the rule accepts it (same currency, amount within the drift, dates within the window). Only
 * rules at the head of the rule list qualify, so that the rule order (first match wins) is kept;
 * every pair records its rule. What is left goes to the in-memory matcher (matching.ts).
 *
 *   recon_prematch (item_key, transfer_key, rule, theirs_minor, ours_minor, in_period)
 */
export function leadingSetRules(rules: MatchingRules): MatchingRule[] {
  const leading: MatchingRule[] = [];
  for (const rule of rules.rules) {
    if (rule.strategy !== "one-to-one" || rule.reference !== "equals") break;
    leading.push(rule);
  }
  return leading;
}

export async function prematch(tx: Tx, rules: readonly MatchingRule[], from: string, to: string): Promise<void> {
  await tx.query(
    // No unique indexes: each pair is unique by construction (one candidate per item and per
    // transfer, none already taken), and keeping two btrees while 100,000 rows go in cost more
    // than finding them; what reads this table joins it whole (hash joins), never by one key.
    `CREATE TEMP TABLE recon_prematch (item_key text NOT NULL, transfer_key text NOT NULL, rule text NOT NULL,
                                       theirs_minor bigint NOT NULL, ours_minor bigint NOT NULL, in_period boolean NOT NULL) ON COMMIT DROP`,
  );
  for (const rule of rules) {
    await tx.query(
      `WITH their_ref AS (
         -- Their reference values without the tag (never their own entry ids, svcr/ntry), of the
         -- items rules may match: booked, not a duplicate. Read from the staged rows, not staged again.
         SELECT t.item_key, t.signed_minor, t.booking_date, t.currency, substr(r, strpos(r, ':') + 1) AS ref
           FROM recon_theirs t CROSS JOIN LATERAL unnest(t.refs) AS r
          WHERE t.status = 'booked' AND t.duplicate_of IS NULL
            AND (CASE WHEN strpos(r, ':') = 0 THEN '' ELSE split_part(r, ':', 1) END) NOT IN ('svcr', 'ntry')
            AND length(substr(r, strpos(r, ':') + 1)) > 0
       ),
       our_ref AS (
         -- Ours: the transfer key, the payment's client_reference, the record's natural key and its link ids without their tag.
         SELECT o.transfer_key, o.signed_minor, o.value_date, o.currency, r AS ref
           FROM recon_ours o
           CROSS JOIN LATERAL unnest(ARRAY[o.transfer_key, o.client_reference, o.natural_key,
                                           substr(o.link_id1, strpos(o.link_id1, ':') + 1), substr(o.link_id2, strpos(o.link_id2, ':') + 1)]) AS r
          WHERE r IS NOT NULL AND length(r) > 0
       ),
       -- Each pair carries what the rule tests (amounts, dates, currencies): nothing is joined back.
       candidate AS (
         SELECT DISTINCT r.item_key, o.transfer_key, r.signed_minor AS theirs_minor, o.signed_minor AS ours_minor,
                r.booking_date, o.value_date, r.currency AS their_currency, o.currency AS our_currency
           FROM their_ref r JOIN our_ref o ON o.ref = r.ref
          WHERE NOT EXISTS (SELECT 1 FROM recon_prematch p WHERE p.item_key = r.item_key)
            AND NOT EXISTS (SELECT 1 FROM recon_prematch p WHERE p.transfer_key = o.transfer_key)
       ),
       -- Counted by window, not by two grouped sets joined: a HAVING count(*) = 1 is estimated one
       -- row, and the join of two such sets was planned as a nested loop (minutes at 100,000).
       counted AS (
         SELECT c.*, count(*) OVER (PARTITION BY item_key) AS per_item, count(*) OVER (PARTITION BY transfer_key) AS per_transfer
           FROM candidate c
       )
       INSERT INTO recon_prematch (item_key, transfer_key, rule, theirs_minor, ours_minor, in_period)
       SELECT s.item_key, s.transfer_key, $1, s.theirs_minor, s.ours_minor,
              s.booking_date BETWEEN $4::date AND $5::date OR s.value_date BETWEEN $4::date AND $5::date
         FROM counted s
        WHERE s.per_item = 1 AND s.per_transfer = 1 AND s.their_currency = s.our_currency
          AND abs(s.theirs_minor - s.ours_minor) <= $2 AND abs(s.booking_date - s.value_date) <= $3`,
      [rule.name, rule.amount.driftMinor, rule.dateWindowDays, from, to],
    );
  }
  await tx.query("ANALYZE recon_prematch (item_key, transfer_key)"); // the anti-joins that read what is left are planned on it
}

/** How many set-based matches touch the period (those outside it belong to a neighbouring run). */
export async function prematchedCount(tx: Tx): Promise<number> {
  const { rows } = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM recon_prematch WHERE in_period");
  return rows[0]?.n ?? 0;
}

/** The set-based matches as results of the run, numbered after the in-memory results (which are numbered from 1 up to seqStart): no row passes through memory. */
export async function storePrematched(tx: Tx, tenantId: string, runId: string, seqStart: number): Promise<void> {
  await tx.query(
    `INSERT INTO recon_result (tenant_id, run_id, seq, outcome, rule, item_keys, transfer_keys, theirs_minor, ours_minor, difference_id)
     SELECT $1, $2, $3 + row_number() OVER (ORDER BY item_key COLLATE "C"), 'matched', rule, ARRAY[item_key], ARRAY[transfer_key], theirs_minor, ours_minor, NULL
       FROM recon_prematch WHERE in_period`,
    [tenantId, runId, seqStart],
  );
}
