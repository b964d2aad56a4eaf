import { assert } from "../assert.ts";
import { limits } from "../config/limits.ts";
import type { Tx } from "../db/transaction.ts";
import type { MatchingRule, MatchingRules } from "./matching-rules.ts";

/**
 * Set-based matching in PostgreSQL, in one statement (docs/decisions/0036): both sides are read
 * once, joined on their references, and every unambiguous pair the leading exact one-to-one rules
 * accept is taken there; only what is left is written to two temporary tables for the in-memory
 * matcher (matching.ts). Nothing of the matched majority passes through memory.
 *
 * A pair is taken only when the in-memory matcher could not decide otherwise (docs/decisions/0027):
 * the item names exactly one of our transfers, that transfer is named by exactly one item rules may
 * match (booked, not a duplicate), and a leading rule accepts it (same currency, amount within the
 * drift, dates within the window); the first such rule is recorded. Taking a pair changes no other
 * item's or transfer's count, so trying the leading rules one after another (first match wins)
 * takes the same pairs as one pass that names, for each pair, the first rule accepting it.
 *
 *   recon_left_item (item_key)                                             their items left
 *   recon_left_transfer (transfer_key, value_date, signed_minor)           our transfers left
 *   recon_prematch (item_key, transfer_key, rule, theirs_minor, ours_minor, in_period), when kept
 */
export function leadingSetRules(rules: MatchingRules): MatchingRule[] {
  const leading: MatchingRule[] = [];
  for (const rule of rules.rules) {
    if (rule.strategy !== "one-to-one" || rule.reference !== "equals") break;
    leading.push(rule);
  }
  return leading;
}

export interface SetMatchInput {
  tenantId: string;
  accountId: string;
  currency: string;   // the account's: every entry on it is in it (migration 0009)
  loadFrom: string;   // the period widened by the widest rule window: what both sides are read over
  loadTo: string;
  from: string;       // the period itself
  to: string;
  rules: readonly MatchingRule[];
  keepPairs: boolean; // a stored run writes its pairs as results (storePrematched)
  // How our references are found (decision 0050): by table size when absent; tests set it to
  // compare the two, which must give the same run.
  referenceLookup?: ReferenceLookup;
}

/**
 * Per table (payment, record_key): an index probe per transfer of the period, or one hash of the
 * table.
 */
export interface ReferenceLookup { paymentByProbe: boolean; recordByProbe: boolean }

export interface SetMatchSummary {
  items: number;            // their items read (the widened period)
  transfers: number;        // our transfers read
  matched: number;          // pairs taken that touch the period
  itemsLeft: number;
  transfersLeft: number;
  theirsDigest: string;     // identity of their side: count and sum of one 64-bit hash per item
  oursDigest: string;       // the same over our transfers
}

// Our side: every transfer that moved the (debit-normal) settlement account over the dates, net of
// its entries there (a debit is money in at the bank: positive), as the ledger keeps it at posting
// (settlement_transfer_net, migration 0022 and decision 0049: one row per account, value date and
// transfer, read here by a range of its primary key with nothing left to group). Left out:
// reconciliation corrections (they answer a difference, which keeps its own state), a transfer that
// nets to nothing, and a posting together with its compensation when both moved the account over
// the dates (the bank never saw either; a corrected record's replacement stands for it). Every
// entry on the account is in the account's currency (migration 0009), so the currency is the
// account's. Each transfer carries its share of the run's identity: a 64-bit hash of its key, net
// and date.
const OUR_SIDE = `
  left_out AS (
    SELECT t.transfer_key FROM transfer t WHERE t.tenant_id = $1 AND t.kind = 'recon_correction'
    UNION ALL
    SELECT c.compensated_key FROM compensation c JOIN settlement_transfer_net pair ON pair.tenant_id = c.tenant_id AND pair.transfer_key = c.compensation_key
     WHERE c.tenant_id = $1 AND pair.account_id = $2 AND pair.value_date BETWEEN $3::date AND $4::date
    UNION ALL
    SELECT c.compensation_key FROM compensation c JOIN settlement_transfer_net pair ON pair.tenant_id = c.tenant_id AND pair.transfer_key = c.compensated_key
     WHERE c.tenant_id = $1 AND pair.account_id = $2 AND pair.value_date BETWEEN $3::date AND $4::date
  ),
  ours AS MATERIALIZED (
    SELECT n.transfer_key, n.value_date, n.signed_minor, $7::char(3) AS currency,
           hashtextextended(n.transfer_key || '=' || n.signed_minor || ':' || to_char(n.value_date, 'YYYY-MM-DD'), 0) AS transfer_hash
      FROM settlement_transfer_net n
     WHERE n.tenant_id = $1 AND n.account_id = $2 AND n.value_date BETWEEN $3::date AND $4::date AND n.signed_minor <> 0
       AND NOT EXISTS (SELECT 1 FROM left_out x WHERE x.transfer_key = n.transfer_key)
  )`;

// References. Theirs: recon_item_ref (migration 0018), a row per reference value of an item rules
// may match, and a row with ref '' for every other item. Ours: the transfer key, the payment's
// client_reference, the record's natural key and its link ids without their tag. The payment and
// the record of each transfer in the period are found either by a probe of their transfer_key
// index per transfer (migration 0023; LATERAL ... OFFSET 0 keeps it an index scan per transfer
// while the statement's other joins are hashes) or by hashing the table, whichever reads less
// (chooseReferenceLookup, decision 0050): hashing alone read every payment and record the tenant
// ever had, so a day's run grew with the tenant's history.
function referencesSql(lookup: ReferenceLookup): string {
  const payments = lookup.paymentByProbe
    ? `CROSS JOIN LATERAL (SELECT p.client_reference FROM payment p
                           WHERE p.tenant_id = $1 AND p.transfer_key = o.transfer_key AND length(p.client_reference) > 0 OFFSET 0) p`
    : "JOIN payment p ON p.tenant_id = $1 AND p.transfer_key = o.transfer_key AND " +
      "length(p.client_reference) > 0";
  const records = lookup.recordByProbe
    ? `CROSS JOIN LATERAL (SELECT k.natural_key, k.link_id1, k.link_id2 FROM record_key k
                           WHERE k.tenant_id = $1 AND k.transfer_key = o.transfer_key OFFSET 0) k`
    : "JOIN record_key k ON k.tenant_id = $1 AND k.transfer_key = o.transfer_key";
  return `
  their_ref AS (
    SELECT item_key, ref, booking_date, signed_minor, currency, item_hash FROM recon_item_ref
     WHERE tenant_id = $1 AND account_id = $2 AND booking_date BETWEEN $3::date AND $4::date
  ),
  our_ref AS (
    SELECT transfer_key, transfer_key AS ref, value_date, signed_minor, currency, transfer_hash FROM ours
    UNION ALL
    SELECT o.transfer_key, p.client_reference, o.value_date, o.signed_minor, o.currency, o.transfer_hash
      FROM ours o ${payments}
    UNION ALL
    SELECT o.transfer_key, v.ref, o.value_date, o.signed_minor, o.currency, o.transfer_hash
      FROM ours o ${records}
      CROSS JOIN LATERAL (VALUES (k.natural_key), (substr(k.link_id1, strpos(k.link_id1, ':') + 1)),
                                 (substr(k.link_id2, strpos(k.link_id2, ':') + 1))) AS v(ref)
     WHERE length(v.ref) > 0
  )`;
}

/**
 * Probe or hash, per table: the period's transfers on the account (a range count of
 * settlement_transfer_net) against the table's live rows as the statistics count them (all
 * tenants': an upper bound of this tenant's history, so a doubt goes to the probe, whose cost
 * follows the period). The answer never changes what a run finds, only what it reads.
 */
async function chooseReferenceLookup(tx: Tx, input: SetMatchInput): Promise<ReferenceLookup> {
  const { rows } = await tx.query<{
    transfers: string;
    payments: string | null;
    records: string | null;
  }>(
    `SELECT (SELECT count(*) FROM settlement_transfer_net
              WHERE tenant_id = $1 AND account_id = $2 AND value_date BETWEEN $3::date AND $4::date) AS transfers,
            (SELECT n_live_tup FROM pg_stat_user_tables WHERE relid = 'payment'::regclass) AS payments,
            (SELECT n_live_tup FROM pg_stat_user_tables
              WHERE relid = 'record_key'::regclass) AS records`,
    [input.tenantId, input.accountId, input.loadFrom, input.loadTo],
  );
  const row = rows[0];
  assert(row !== undefined, "the lookup choice reads one row");
  const bound = BigInt(row.transfers) * BigInt(limits.recon.referenceProbeRowsPerTransfer);
  const byProbe = (tableRows: string | null) => tableRows === null || BigInt(tableRows) > bound;
  return { paymentByProbe: byProbe(row.payments), recordByProbe: byProbe(row.records) };
}

/** The number of the first leading rule that accepts an edge (1-based), NULL when none does. */
function ruleCase(rules: readonly MatchingRule[], firstParam: number): string {
  if (rules.length === 0) return "NULL::int";
  const whens = rules.map((_, i) => {
    const drift = `$${firstParam + 2 * i}::bigint`;
    const window = `$${firstParam + 2 * i + 1}::int`;
    return `WHEN r.currency = o.currency AND abs(r.signed_minor - o.signed_minor) <= ${drift} AND ` +
      `` +
      `abs(r.booking_date - o.value_date) <= ${window} THEN ${i + 1}`;
  });
  return `CASE ${whens.join(" ")} END`;
}

const FIRST_RULE_PARAM = 8; // $1..$7: tenant, account, load from/to, period from/to, currency

// Uniqueness is min = max of the other side's key over the edges. Each item is grouped first
// ("per_item": the only transfer it names, if one, with the first rule accepting that pair); each
// item then claims its only transfer, and the claims are grouped with the edges by transfer
// ("per_transfer", decision 0044): a transfer named by exactly one item, and claimed by it, is a
// pair, and the group of the null key holds every item that claims none. So every item and every
// transfer is counted in exactly one group, and no join pairs the two aggregates. The groups are
// sorted in byte order (COLLATE "C": the same groups as the keys' collation, which is
// deterministic, and min = max means the same), and the statement is planned with sorts instead of
// hash tables (runMatch): measured, a sort of these keys costs about half of a hash aggregate over
// them. The amounts of a pair are carried only when the pairs are kept (a stored run).
function matchSql(
  rules: readonly MatchingRule[], keepPairs: boolean, writeLeftovers: boolean,
  lookup: ReferenceLookup,
): string {
  const namesParam = FIRST_RULE_PARAM + 2 * rules.length;
  const amounts = keepPairs
    ? ", min(theirs_minor) AS theirs_minor, min(ours_minor) AS ours_minor"
    : "";
  const claimAmounts = keepPairs
    ? ", min(theirs_minor) FILTER (WHERE claim) AS theirs_minor, min(ours_minor) FILTER (WHERE " +
      "claim) AS ours_minor"
    : "";
  const noAmounts = keepPairs ? ", NULL::bigint AS theirs_minor, NULL::bigint AS ours_minor" : "";
  const claimColumns = keepPairs ? ", theirs_minor, ours_minor" : "";
  return `WITH ${OUR_SIDE}, ${referencesSql(lookup)},
  edge AS (
    SELECT r.item_key, r.item_hash, o.transfer_key, o.transfer_hash${keepPairs ? ", r.signed_minor AS theirs_minor, o.signed_minor AS ours_minor" : ""},
           ${ruleCase(rules, FIRST_RULE_PARAM)} AS rule,
           (r.booking_date BETWEEN $5::date AND $6::date OR o.value_date BETWEEN $5::date AND $6::date) AS in_period
      FROM their_ref r FULL JOIN our_ref o ON o.ref = r.ref
  ),
  per_item AS (
    SELECT item_key COLLATE "C" AS item_key,
           CASE WHEN min(transfer_key COLLATE "C") = max(transfer_key COLLATE "C") THEN min(transfer_key COLLATE "C") END AS only_transfer,
           min(rule) AS rule, bool_or(in_period) AS in_period, min(item_hash) AS item_hash${amounts}
      FROM edge WHERE item_key IS NOT NULL GROUP BY item_key COLLATE "C"
  ),
  per_transfer AS (
    SELECT transfer_key,
           count(*) FILTER (WHERE claim) AS items, sum(item_hash) FILTER (WHERE claim) AS item_hashes,
           min(transfer_hash) FILTER (WHERE NOT claim) AS transfer_hash,
           coalesce(min(item_key) FILTER (WHERE NOT claim) = max(item_key) FILTER (WHERE NOT claim) AND bool_or(claim)
                    AND min(rule) FILTER (WHERE claim) IS NOT NULL, false) AS taken,
           min(item_key) FILTER (WHERE claim) AS item_key, min(rule) FILTER (WHERE claim) AS rule,
           coalesce(bool_or(in_period) FILTER (WHERE claim), false) AS in_period${claimAmounts}
      FROM (SELECT transfer_key COLLATE "C" AS transfer_key, item_key COLLATE "C" AS item_key, false AS claim, NULL::bigint AS item_hash, transfer_hash,
                   NULL::int AS rule, NULL::boolean AS in_period${noAmounts}
              FROM edge WHERE transfer_key IS NOT NULL
            UNION ALL
            SELECT only_transfer, item_key, true, item_hash, NULL, rule, in_period${claimColumns} FROM per_item) x
     GROUP BY transfer_key
  )${writeLeftovers ? leftoversSql(keepPairs, namesParam) : ""}
  ${SUMMARY}`;
}

// Counts and the run's identity, over "per_transfer": a group per transfer, and the group of the
// null key for the items that claim no transfer; each item is one claim in one group.
const SUMMARY = `
  SELECT coalesce(sum(items), 0)::int AS items,
         count(transfer_key)::int AS transfers,
         count(*) FILTER (WHERE taken AND in_period)::int AS matched,
         (coalesce(sum(items), 0) - count(*) FILTER (WHERE taken))::int AS items_left,
         (count(transfer_key) - count(*) FILTER (WHERE taken))::int AS transfers_left,
         coalesce(sum(items), 0) || ':' || coalesce(sum(item_hashes), 0) AS theirs_digest,
         count(transfer_key) || ':' || coalesce(sum(transfer_hash), 0) AS ours_digest
    FROM per_transfer`;

/** What is left, to the temporary tables the in-memory matcher reads; the pairs too when kept. */
function leftoversSql(keepPairs: boolean, namesParam: number): string {
  return `,
  items_left AS (
    INSERT INTO recon_left_item (item_key)
    SELECT i.item_key FROM per_item i
     WHERE NOT EXISTS (SELECT 1 FROM per_transfer f WHERE f.taken AND f.item_key = i.item_key AND f.transfer_key = i.only_transfer)
  ),
  transfers_left AS (
    INSERT INTO recon_left_transfer (transfer_key, value_date, signed_minor)
    SELECT o.transfer_key, o.value_date, o.signed_minor FROM ours o JOIN per_transfer f ON f.transfer_key = o.transfer_key COLLATE "C" WHERE NOT f.taken
  )${
    keepPairs
      ? `,
  pairs AS (
    INSERT INTO recon_prematch (item_key, transfer_key, rule, theirs_minor, ours_minor, in_period)
    SELECT item_key, transfer_key, ($${namesParam}::text[])[rule], theirs_minor, ours_minor, in_period FROM per_transfer WHERE taken
  )`
      : ""
  }`;
}

/**
 * Runs the set-based match inside the run's transaction. The planner is steered for this one
 * statement: its row estimates of aggregates and CTEs are guesses (a grouped set of 100,000 rows
 * estimated at one), on which it chose nested loops (minutes at 100,000) or merge joins with two
 * sorts; every join here is set-sized, so hashes are right (and JIT, which the steering's costs
 * would trigger, only compiles for seconds). Its groupings, though, are sorts (decision 0044): a
 * hash aggregate over 100,000 keys is a cache miss per row, and a sort of the same keys in byte
 * order (abbreviated keys) measured at about half of it.
 */
export async function matchInDatabase(tx: Tx, input: SetMatchInput): Promise<SetMatchSummary> {
  // A dry run first asks without writing (docs/decisions/0040): a read-only statement, with no
  // temporary tables to create and drop. Only when it left something is the statement run again,
  // writing what is left for the in-memory matcher (so such a dry run pays the statement twice).
  // How the references are read is chosen once for both.
  const lookup = input.referenceLookup ?? await chooseReferenceLookup(tx, input);
  if (!input.keepPairs) {
    const summary = await runMatch(tx, input, lookup, false);
    if (summary.itemsLeft + summary.transfersLeft === 0) return summary;
  }
  await tx.query(`CREATE TEMP TABLE recon_left_item (item_key text NOT NULL) ON COMMIT DROP;
                  CREATE TEMP TABLE recon_left_transfer (transfer_key text NOT NULL, value_date date NOT NULL, signed_minor bigint NOT NULL) ON COMMIT DROP`);
  if (input.keepPairs) {
    await tx.query(`CREATE TEMP TABLE recon_prematch (item_key text NOT NULL, transfer_key text NOT NULL, rule text NOT NULL,
                                                      theirs_minor bigint NOT NULL, ours_minor bigint NOT NULL, in_period boolean NOT NULL) ON COMMIT DROP`);
  }
  return runMatch(tx, input, lookup, true);
}

async function runMatch(
  tx: Tx, input: SetMatchInput, lookup: ReferenceLookup, writeLeftovers: boolean,
): Promise<SetMatchSummary> {
  // No parallel workers either: the read-only form may have them, and the planner then put the
  // left-out set's join over a parallel scan of a whole table (not the account's rows),
  // while the grouping and joins that carry the cost stayed serial (full joins are not parallel
  // before PostgreSQL 16). Hash aggregates off: every grouping here sorts its keys in byte order.
  await tx.query(
    "SET LOCAL enable_nestloop = off; SET LOCAL enable_mergejoin = off; SET LOCAL enable_hashagg " +
    "= off; SET LOCAL jit = off; SET LOCAL max_parallel_workers_per_gather = 0",
  );
  const params: unknown[] = [
    input.tenantId, input.accountId, input.loadFrom, input.loadTo, input.from, input.to,
    input.currency,
  ];
  for (const rule of input.rules) params.push(rule.amount.driftMinor, rule.dateWindowDays);
  if (input.keepPairs) params.push(input.rules.map((r) => r.name));
  const { rows } = await tx.query<{
    items: number;
    transfers: number;
    matched: number;
    items_left: number;
    transfers_left: number;
    theirs_digest: string;
    ours_digest: string;
  }>(matchSql(input.rules, input.keepPairs, writeLeftovers, lookup), params);
  await tx.query(
    "SET LOCAL enable_nestloop TO DEFAULT; SET LOCAL enable_mergejoin TO DEFAULT; SET LOCAL " +
    "enable_hashagg TO DEFAULT; SET LOCAL jit TO DEFAULT; SET LOCAL " +
    "max_parallel_workers_per_gather TO DEFAULT",
  );
  const row = rows[0];
  assert(row !== undefined, "the set-based match returns one summary row");
  return {
    items: row.items, transfers: row.transfers, matched: row.matched, itemsLeft: row.items_left,
    transfersLeft: row.transfers_left, theirsDigest: row.theirs_digest, oursDigest: row.ours_digest,
  };
}

/**
 * The set-based matches as results of the run, numbered after the in-memory results (which are
 * numbered from 1 up to seqStart): no row passes through memory.
 */
export async function storePrematched(
  tx: Tx, tenantId: string, runId: string, seqStart: number,
): Promise<void> {
  await tx.query(
    `INSERT INTO recon_result (tenant_id, run_id, seq, outcome, rule, item_keys, transfer_keys,
       theirs_minor, ours_minor, difference_id)
     SELECT $1, $2, $3 + row_number() OVER (ORDER BY item_key COLLATE "C"), 'matched', rule,
       ARRAY[item_key], ARRAY[transfer_key], theirs_minor, ours_minor, NULL
     FROM recon_prematch
     WHERE in_period`,
    [tenantId, runId, seqStart],
  );
}
