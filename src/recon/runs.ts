import { createHash } from "node:crypto";
import { assert } from "../assert.ts";
import { enqueueEvents } from "../outbox/outbox-store.ts";
import { limits } from "../config/limits.ts";
import type { Pool, Queryable } from "../db/pool.ts";
import { withTransaction, type Tx } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { findAccount } from "../ledger/index.ts";
import { differenceView, findDifferences } from "./differences.ts";
import { reconcile, type MatchResult, type MatchOutcome } from "./matching.ts";
import { matchingRules, widestWindowDays, type MatchingRules } from "./matching-rules.ts";
import { refreshReconMetrics } from "./recon-metrics.ts";
import {
  leadingSetRules, matchInDatabase, storePrematched, type SetMatchSummary,
} from "./set-matching.ts";
import { ourTransfers, theirItems } from "./sides.ts";

export type DifferenceReason = Exclude<MatchOutcome, "matched" | "pending">;

export interface RunSummary {
  runId: string;
  accountId: string;
  from: string;
  to: string;
  matched: number;
  differences: Record<Exclude<MatchOutcome, "matched">, number>;
  dryRun: boolean;
  alreadyRun: boolean;       // the same inputs were reconciled before: this is that run
}

const noDifferences = (): RunSummary["differences"] => ({
  theirs_only: 0, ours_only: 0, amount_differs: 0, date_outside_window: 0,
  duplicate_on_their_side: 0, pending: 0, foreign_currency: 0,
});

/** A date `days` later (earlier when negative), as YYYY-MM-DD. */
export function shiftDays(date: string, days: number): string {
  return new Date(Date.parse(date) + days * 86_400_000).toISOString().slice(0, 10);
}

function hashOf(parts: readonly string[], prefix: string): string {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part).update("\u0000");
  return `${prefix}${hash.digest("hex").slice(0, 24)}`;
}

/**
 * A difference is identified by what it is about, not by the run: a later run finds the same one.
 */
export function differenceIdOf(tenantId: string, accountId: string, result: MatchResult): string {
  return hashOf(
    [
      tenantId, accountId, result.outcome, ...[...result.itemKeys].sort(), "|",
      ...[...result.transferKeys].sort(),
    ],
    "rdf_",
  );
}

/**
 * Reconciles one settlement account over one period: their items against our transfers, by the
 * rules in protocols/recon/matching-rules.json. The run is identified by its inputs (their items,
 * our transfers, the rules' version): the same inputs give the same run, stored once; a dry run
 * stores nothing. Differences are stored by their own identity, so one seen again is not new.
 */
export async function runReconciliation(
  pool: Pool,
  input: RunInput,
  rules: MatchingRules = matchingRules, bounds: RunBounds = limits.recon,
): Promise<Result<RunSummary, Finding>> {
  const run = await withTransaction(
    pool, (tx) => runReconciliationInTransaction(tx, input, rules, bounds));
  if (run.ok && !input.dryRun) await refreshReconMetrics(pool, input.tenantId);
  return run;
}

export interface RunInput {
  tenantId: string; accountId: string; from: string; to: string; dryRun?: boolean;
}

/**
 * The run in the caller's transaction (HTTP: the Idempotency-Key's claim commits with it). The
 * caller refreshes the reconciliation metrics once it committed (refreshReconMetrics).
 */
export async function runReconciliationInTransaction(
  tx: Tx,
  input: RunInput,
  rules: MatchingRules = matchingRules, bounds: RunBounds = limits.recon,
): Promise<Result<RunSummary, Finding>> {
  const { tenantId, accountId, from, to } = input;
  const account = await reconcilableAccount(tx, input);
  if (!account.ok) return account;
  const { currency } = account.value;
  const window = widestWindowDays(rules);
  const [loadFrom, loadTo] = [shiftDays(from, -window), shiftDays(to, window)];
  const inPeriod = (date: string) => date >= from && date <= to;
  // Set-sized statements: sorts and hashes in memory, not spilled to disk
  // (limits.recon.runWorkMemMb).
  await tx.query(`SET LOCAL work_mem = '${limits.recon.runWorkMemMb}MB'`);
  const matched = await matchInDatabase(tx, {
    tenantId, accountId, currency, loadFrom, loadTo, from, to,
    rules: leadingSetRules(rules), keepPairs: input.dryRun !== true,
  });
  // Refused before anything is read into memory or stored (the temporary tables go with the
  // transaction).
  const refusal = runRefusal(matched, bounds, from, to);
  if (refusal) return fail(refusal);
  // Only what the set-based matching left is read into memory, and only when there is any.
  const theirs =
    matched.itemsLeft > 0
      ? await theirItems(tx, tenantId, accountId, loadFrom, loadTo, currency)
      : [];
  const ours = matched.transfersLeft > 0 ? await ourTransfers(tx, tenantId, currency) : [];
  const results = reconcile(theirs, ours, rules, inPeriod);
  const runId = hashOf(
    [tenantId, accountId, from, to, rules.version, matched.theirsDigest, "|", matched.oursDigest],
    "rrn_",
  );
  const counted: RunSummary = {
    runId, accountId, from, to, matched: matched.matched, differences: noDifferences(),
    dryRun: input.dryRun === true, alreadyRun: false,
  };
  for (const result of results) {
    if (result.outcome === "matched") counted.matched++;
    else counted.differences[result.outcome]++;
  }
  if (input.dryRun) return ok(counted);
  const stored = await storeRun(tx, tenantId, counted, results, currency, rules.version);
  if (!stored.alreadyRun) await storePrematched(tx, tenantId, runId, results.length);
  return ok(stored);
}

/** The run's period checked and its account, which must be a settlement account. */
async function reconcilableAccount(
  db: Queryable, input: RunInput,
): Promise<Result<{ currency: string }, Finding>> {
  const { tenantId, accountId, from, to } = input;
  if (
    !/^\d{4}-\d{2}-\d{2}$/.test(from) || !/^\d{4}-\d{2}-\d{2}$/.test(to) ||
    Number.isNaN(Date.parse(from)) || Number.isNaN(Date.parse(to)) || from > to
  ) {
    return fail(finding("RECON_PERIOD_INVALID",
      `period ${from}..${to} is not two YYYY-MM-DD dates in order`, { field: "from" }));
  }
  const account = await findAccount(db, tenantId, accountId);
  if (!account) {
    return fail(finding("LEDGER_ACCOUNT_UNKNOWN", `account ${accountId} does not exist`, {
      field: "account",
    }));
  }
  if (account.kind !== "settlement") {
    return fail(finding("RECON_ACCOUNT_NOT_RECONCILABLE",
      `account ${accountId} is a ${account.kind} account`, { field: "account" }));
  }
  return ok({ currency: account.currency });
}

/**
 * The bounds a run keeps to (limits.recon): what it reads, and what of it the in-memory matcher
 * takes.
 */
export interface RunBounds {
  runItemsMax: number;
  runLeftoversMax: number;
}

function runRefusal(
  matched: SetMatchSummary, bounds: RunBounds, from: string, to: string,
): Finding | undefined {
  if (matched.items + matched.transfers > bounds.runItemsMax) {
    return finding(
      "RECON_RUN_TOO_LARGE",
      `more than ${bounds.runItemsMax} items over ${from}..${to} (with the rules' date window); ` +
      `split the period`,
      { field: "to" },
    );
  }
  const left = matched.itemsLeft + matched.transfersLeft;
  if (left > bounds.runLeftoversMax) {
    return finding(
      "RECON_RUN_LEFTOVERS_TOO_MANY",
      `${left} items and transfers over ${from}..${to} pair with nothing by reference ` +
      `(${matched.itemsLeft} theirs, ${matched.transfersLeft} ours); the in-memory matcher takes ` +
      `at most ${bounds.runLeftoversMax}: check the account and its imports, or split the period`,
      { field: "to" },
    );
  }
  return undefined;
}

export async function storeRun(
  tx: Tx, tenantId: string, summary: RunSummary, results: MatchResult[], currency: string,
  rulesVersion: string,
): Promise<RunSummary> {
  const inserted = await tx.query(
    `INSERT INTO recon_run (tenant_id, run_id, account_id, period_from, period_to, rules_version,
       matched, counts)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (tenant_id, run_id) DO NOTHING`,
    [
      tenantId, summary.runId, summary.accountId, summary.from, summary.to, rulesVersion,
      summary.matched, JSON.stringify(summary.differences),
    ],
  );
  if (inserted.rowCount === 0) return { ...summary, alreadyRun: true };
  for (let start = 0; start < results.length; start += limits.recon.resultBatchRowsMax) {
    const batch = results.slice(start, start + limits.recon.resultBatchRowsMax);
    const ids = batch.map((r) =>
      r.outcome === "matched" || r.outcome === "pending"
        ? null
        : differenceIdOf(tenantId, summary.accountId, r),
    );
    await tx.query(
      `INSERT INTO recon_result (tenant_id, run_id, seq, outcome, rule, item_keys, transfer_keys,
         theirs_minor, ours_minor, difference_id)
       SELECT $1, $2, $3 + r.n, r.outcome, r.rule, string_to_array(r.item_keys, chr(31)),
         string_to_array(r.transfer_keys, chr(31)), r.theirs, r.ours, r.difference_id
       FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::bigint[],
         $10::text[]) WITH ORDINALITY AS r(outcome, rule, item_keys, transfer_keys, theirs, ours,
         difference_id, n)`,
      [
        tenantId, summary.runId, start, batch.map((r) => r.outcome),
        batch.map((r) => r.rule ?? null), batch.map((r) => r.itemKeys.join("\u001f")),
        batch.map((r) => r.transferKeys.join("\u001f")), batch.map((r) => r.theirsMinor.toString()),
        batch.map((r) => r.oursMinor.toString()), ids,
      ],
    );
    await upsertDifferences(
      tx, tenantId, summary, batch.filter((_, i) => ids[i] !== null),
      ids.filter((id): id is string => id !== null), currency,
    );
  }
  await resolveVanishedDifferences(tx, tenantId, summary);
  return summary;
}

async function upsertDifferences(
  tx: Tx, tenantId: string, summary: RunSummary, results: MatchResult[], ids: string[],
  currency: string,
): Promise<void> {
  if (results.length === 0) return;
  await tx.query(
    `INSERT INTO recon_difference AS d (tenant_id, difference_id, account_id, reason,
       first_run_id, last_run_id, item_keys, transfer_keys, delta_minor, currency)
     SELECT $1, r.id, $2, r.reason, $3, $3, string_to_array(r.item_keys, chr(31)),
       string_to_array(r.transfer_keys, chr(31)), r.delta, $4
     FROM unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::bigint[]) AS r(id, reason,
       item_keys, transfer_keys, delta)
     ON CONFLICT (tenant_id, difference_id) DO UPDATE
     SET last_run_id = excluded.last_run_id, state = CASE WHEN d.state = 'resolved' THEN 'open' ELSE
       d.state END`,
    [
      tenantId, summary.accountId, summary.runId, currency, ids, results.map((r) => r.outcome),
      results.map((r) => r.itemKeys.join("\u001f")),
      results.map((r) => r.transferKeys.join("\u001f")),
      results.map((r) => (r.theirsMinor - r.oursMinor).toString()),
    ],
  );
  // Told in the run's transaction, once per difference (a later run finding it again adds
  // nothing), with the difference as the HTTP API shows it (docs/decisions/0107).
  const found = new Map((await findDifferences(tx, tenantId, ids)).map((d) => [d.differenceId, d]));
  await enqueueEvents(tx, ids.map((id) => {
    const difference = found.get(id);
    assert(difference !== undefined, `difference ${id} was written in this transaction`);
    const data = differenceView(difference);
    return { tenantId, eventType: "recon.difference", eventKey: `${id}:open`, data };
  }));
}

/**
 * An open difference of this account and period that this run no longer finds (a late booking
 * arrived, a transfer was matched) is resolved: nobody has to correct it.
 */
async function resolveVanishedDifferences(
  tx: Tx, tenantId: string, summary: RunSummary,
): Promise<void> {
  await tx.query(
    `UPDATE recon_difference d SET state = 'resolved'
      WHERE d.tenant_id = $1 AND d.account_id = $2 AND d.state = 'open' AND d.last_run_id <> $3
        AND EXISTS (SELECT 1 FROM recon_run r
                     WHERE r.tenant_id = d.tenant_id AND r.run_id = d.last_run_id
                       AND r.period_from >= $4::date AND r.period_to <= $5::date)`,
    [tenantId, summary.accountId, summary.runId, summary.from, summary.to],
  );
}

export interface RunDetail extends RunSummary {
  currency: string;          // the account's: every amount of the run is in it
  results: Array<{
    outcome: MatchOutcome; rule: string | null; itemKeys: string[]; transferKeys: string[];
    theirsMinor: string; oursMinor: string; differenceId: string | null; state: string | null;
  }>;
  resultsTruncated: boolean;
}

/** A stored run with its differences (theirs_only first) and its matches, up to `rowsMax` rows. */
export async function showRun(
  db: Queryable, tenantId: string, runId: string, rowsMax: number,
): Promise<RunDetail | undefined> {
  const run = await db.query<{
    account_id: string;
    from: string;
    to: string;
    matched: number;
    counts: RunSummary["differences"];
  }>(
    `SELECT account_id, to_char(period_from, 'YYYY-MM-DD') AS from, to_char(period_to,
       'YYYY-MM-DD') AS to, matched, counts
     FROM recon_run
     WHERE tenant_id = $1 AND run_id = $2`,
    [tenantId, runId],
  );
  const head = run.rows[0];
  if (!head) return undefined;
  const { rows } = await db.query<{
    outcome: MatchOutcome;
    rule: string | null;
    item_keys: string[];
    transfer_keys: string[];
    theirs_minor: string;
    ours_minor: string;
    difference_id: string | null;
    state: string | null;
  }>(
    `SELECT r.outcome, r.rule, r.item_keys, r.transfer_keys, r.theirs_minor::text,
       r.ours_minor::text, r.difference_id, d.state
     FROM recon_result r
     LEFT JOIN recon_difference d ON d.tenant_id = r.tenant_id AND d.difference_id = r.difference_id
     WHERE r.tenant_id = $1 AND r.run_id = $2
     ORDER BY r.seq
     LIMIT $3`,
    [tenantId, runId, rowsMax + 1],
  );
  const account = await findAccount(db, tenantId, head.account_id);
  assert(account !== undefined, `run ${runId}'s account ${head.account_id} exists`);
  return {
    runId,
    accountId: head.account_id,
    currency: account.currency,
    from: head.from,
    to: head.to,
    matched: head.matched,
    differences: head.counts,
    dryRun: false,
    alreadyRun: true,
    results: rows
      .slice(0, rowsMax)
      .map((r) => ({
        outcome: r.outcome, rule: r.rule, itemKeys: r.item_keys, transferKeys: r.transfer_keys,
        theirsMinor: r.theirs_minor, oursMinor: r.ours_minor, differenceId: r.difference_id,
        state: r.state,
      })),
    resultsTruncated: rows.length > rowsMax,
  };
}

/** A run as the HTTP API and `clearline recon run --json` answer it (docs/decisions/0107). */
export function runSummaryView(v: RunSummary): Record<string, unknown> {
  return {
    run_id: v.runId, account: v.accountId, from: v.from, to: v.to, matched: v.matched,
    differences: v.differences, dry_run: v.dryRun, already_run: v.alreadyRun,
  };
}

/**
 * A stored run as the HTTP API and `clearline recon show --json` show it (docs/decisions/0107):
 * snake_case, amounts in minor units as strings with the account's currency.
 */
export function runDetailView(d: RunDetail): Record<string, unknown> {
  return {
    ...runSummaryView(d), currency: d.currency,
    results: d.results.map((r) => ({
      outcome: r.outcome, rule: r.rule, item_keys: r.itemKeys, transfer_keys: r.transferKeys,
      theirs_minor: r.theirsMinor, ours_minor: r.oursMinor, difference_id: r.differenceId,
      state: r.state,
    })),
    results_truncated: d.resultsTruncated,
  };
}
