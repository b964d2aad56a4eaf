import type { Pool } from "../../src/db/pool.ts";
import { accountKinds, signedBalance, type AccountKind } from "../../src/ledger/account-kinds.ts";
import { balanceOf } from "../../src/ledger/balance.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { calendarDateOf } from "../../src/protocols/calendars/calendar-date.ts";
import { calendarOfCurrency } from "../../src/normalize/settlement-date.ts";
import { httpCall } from "./http.ts";
import { minorOf, minorText } from "./money.ts";
import type { World } from "./world.ts";

/** One broken promise, with what it takes to see it: which account or key, expected against found. */
export interface Violation {
  invariant: string;
  subject: string;      // the account, key or file the evidence is about
  expected: string;
  found: string;
}

export interface InvariantInput {
  world: World;
  pool: Pool;
  baseUrl: string;
  /** incremental: the ledger verified from its last checkpoint (a soak's frequent checks); default full. */
  ledgerVerify?: "full" | "incremental";
  /** When given, each invariant's time in ms is added under its name (where a check's time goes). */
  timingMs?: Map<string, number>;
}

type Invariant = (input: InvariantInput) => Promise<Violation[]>;

// Guards: the ledger's own arbiter (`clearline ledger verify`) finds nothing wrong: every transfer balances, the projection agrees, no customer is negative.
async function ledgerVerifyClean({ pool, ledgerVerify }: InvariantInput): Promise<Violation[]> {
  // Every passing run leaves a checkpoint, so the next incremental run reads only what is new;
  // a full run also checks the checkpoints themselves against every entry.
  const report = await verifyLedger(pool, { mode: ledgerVerify ?? "full", writeCheckpoint: true });
  return report.problems.map((p) => ({ invariant: "ledgerVerifyClean", subject: p.accountId ?? p.transferKey ?? p.tenantId, expected: "no problem", found: `${p.code}: ${p.message}` }));
}

interface TruthRow {
  account_id: string;
  kind: AccountKind;
  debits: string;
  credits: string;
}

async function entryBalances(pool: Pool, tenantId: string): Promise<Map<string, { kind: AccountKind; balance: bigint }>> {
  const { rows } = await pool.query<TruthRow>(
    `SELECT a.account_id, a.kind,
            coalesce(sum(e.amount_minor) FILTER (WHERE e.direction = 'D'), 0)::text AS debits,
            coalesce(sum(e.amount_minor) FILTER (WHERE e.direction = 'C'), 0)::text AS credits
       FROM account a LEFT JOIN ledger_entry e ON e.tenant_id = a.tenant_id AND e.account_id = a.account_id
      WHERE a.tenant_id = $1 GROUP BY a.account_id, a.kind ORDER BY a.account_id`, [tenantId]);
  return new Map(rows.map((r) => [r.account_id, { kind: r.kind, balance: signedBalance(r.kind, BigInt(r.debits), BigInt(r.credits)) }]));
}

// Guards: a balance anyone reads (the API, the funds check's balanceOf) is the sum of the committed entries, never a stale or skipped view.
async function balancesReadEqualEntries({ world, pool, baseUrl }: InvariantInput): Promise<Violation[]> {
  const violations: Violation[] = [];
  const truth = await entryBalances(pool, world.tenantId);
  for (const [accountId, { balance }] of truth) {
    const read = await balanceOf(pool, world.tenantId, accountId);
    if (read?.balanceMinor !== balance) {
      violations.push({ invariant: "balancesReadEqualEntries", subject: `${accountId} via balanceOf`, expected: minorText(balance), found: read ? minorText(read.balanceMinor) : "no account" });
    }
    const api = await httpCall(baseUrl, world.apiKey, "GET", `/v1/accounts/${encodeURIComponent(accountId)}/balance`);
    const apiBalance = api.kind === "answer" && api.status === 200 ? minorOf(String(api.json.balance)) : undefined;
    if (apiBalance !== balance) {
      violations.push({ invariant: "balancesReadEqualEntries", subject: `${accountId} via GET /v1/accounts/${accountId}/balance`, expected: minorText(balance), found: apiBalance === undefined ? JSON.stringify(api) : minorText(apiBalance) });
    }
  }
  return violations;
}

// Guards: no customer is ever spent below zero (the funds check of payments, refunds, card holds and ACH debits is exact).
async function noCustomerBelowZero({ world, pool }: InvariantInput): Promise<Violation[]> {
  const truth = await entryBalances(pool, world.tenantId);
  return [...truth].filter(([, t]) => t.kind === "customer" && t.balance < 0n)
    .map(([accountId, t]) => ({ invariant: "noCustomerBelowZero", subject: accountId, expected: ">= 0.00", found: minorText(t.balance) }));
}

/**
 * Effective postings per ACH natural key: transfers derived from the key, less the compensations
 * among them (`...:compensate`): a transfer and its compensation net to none.
 *
 * A key's transfers are found by the range [key:, key;) of the transfer key's index (';' follows
 * ':' in byte order), which the sim's databases sort by (created with LOCALE 'C', database.ts):
 * a starts_with join read every transfer for every key and grew with the square of the run.
 */
async function achEffectivePostingsOf(pool: Pool, tenantId: string): Promise<Map<string, { effective: number; keys: string }>> {
  const { rows } = await pool.query<{ natural_key: string; postings: bigint; compensations: bigint; keys: string | null }>(
    `WITH keys AS (SELECT natural_key FROM record_key WHERE tenant_id = $1 AND channel = 'ach'
                   UNION SELECT natural_key FROM record_review WHERE tenant_id = $1)
     SELECT k.natural_key,
            count(t.transfer_key) FILTER (WHERE t.transfer_key NOT LIKE '%:compensate') AS postings,
            count(t.transfer_key) FILTER (WHERE t.transfer_key LIKE '%:compensate') AS compensations,
            string_agg(t.transfer_key, ', ' ORDER BY t.transfer_key) AS keys
       FROM keys k LEFT JOIN transfer t ON t.tenant_id = $1
        AND t.transfer_key >= k.natural_key || ':' AND t.transfer_key < k.natural_key || ';'
        AND starts_with(t.transfer_key, k.natural_key || ':')
      GROUP BY k.natural_key`, [tenantId]);
  return new Map(rows.map((r) => [r.natural_key, { effective: Number(r.postings - r.compensations), keys: r.keys ?? "" }]));
}

/** One read of the effective postings per check: two invariants use them. */
const achEffectivePostingsOfCheck = new WeakMap<InvariantInput, ReturnType<typeof achEffectivePostingsOf>>();

function achEffectivePostings(input: InvariantInput): ReturnType<typeof achEffectivePostingsOf> {
  let read = achEffectivePostingsOfCheck.get(input);
  if (!read) {
    read = achEffectivePostingsOf(input.pool, input.world.tenantId);
    achEffectivePostingsOfCheck.set(input, read);
  }
  return read;
}

// Guards: one record, one payment: no natural key, client_reference or ISO 8583 key is in effect more than once (a correction released next to its original is a double posting).
async function atMostOneEffectivePostingPerKey(input: InvariantInput): Promise<Violation[]> {
  const { world, pool } = input;
  const violations: Violation[] = [];
  for (const [naturalKey, { effective, keys }] of await achEffectivePostings(input)) {
    const allowed = 1 + (world.applyAsNewByKey.get(naturalKey) ?? 0);
    if (effective > allowed) violations.push({ invariant: "atMostOneEffectivePostingPerKey", subject: naturalKey, expected: `at most ${allowed} effective posting(s)`, found: `${effective}: ${keys}` });
  }
  const http = await pool.query<{ client_reference: string; n: bigint }>(
    `SELECT client_reference, count(*) AS n FROM (
       SELECT client_reference FROM payment WHERE tenant_id = $1 AND transfer_key IS NOT NULL
       UNION ALL SELECT substring(transfer_key FROM '^api:(.*):debit$') FROM transfer WHERE tenant_id = $1 AND transfer_key LIKE 'api:%:debit') p
      GROUP BY client_reference HAVING count(*) <> 2`, [world.tenantId]);
  for (const row of http.rows) violations.push({ invariant: "atMostOneEffectivePostingPerKey", subject: `client_reference ${row.client_reference}`, expected: "one payment row and one transfer", found: `${row.n} rows` });
  const iso = await pool.query<{ natural_key: string; originals: bigint; undone: bigint }>(
    `SELECT substring(transfer_key FROM '^(.*):(hold|posting|release|reversal)$') AS natural_key,
            count(*) FILTER (WHERE transfer_key ~ ':(hold|posting)$') AS originals,
            count(*) FILTER (WHERE transfer_key ~ ':(release|reversal)$') AS undone
       FROM transfer WHERE tenant_id = $1 AND kind LIKE 'card_%' GROUP BY 1
     HAVING count(*) FILTER (WHERE transfer_key ~ ':(hold|posting)$') > 1
         OR count(*) FILTER (WHERE transfer_key ~ ':(release|reversal)$') > count(*) FILTER (WHERE transfer_key ~ ':(hold|posting)$')`, [world.tenantId]);
  for (const row of iso.rows) violations.push({ invariant: "atMostOneEffectivePostingPerKey", subject: `iso8583 ${row.natural_key}`, expected: "at most one hold/posting, released at most once", found: `${row.originals} originals, ${row.undone} releases` });
  return violations;
}

async function existingTransfers(pool: Pool, tenantId: string, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const { rows } = await pool.query<{ transfer_key: string }>("SELECT transfer_key FROM transfer WHERE tenant_id = $1 AND transfer_key = ANY($2::text[])", [tenantId, keys]);
  return new Set(rows.map((r) => r.transfer_key));
}

// Guards: what a client was told is what happened, even across kill -9: an acknowledged payment, refund, file record or card approval is posted; a declined one is not.
async function acknowledgedMeansPosted(input: InvariantInput): Promise<Violation[]> {
  const { world, pool } = input;
  const violations: Violation[] = [];
  const expectations: Array<{ key: string; posted: boolean; why: string }> = [];
  for (const p of world.payments) {
    if (p.told === "applied") expectations.push({ key: `api:${p.clientReference}:debit`, posted: true, why: "payment answered 201" });
    if (p.told === "declined") expectations.push({ key: `api:${p.clientReference}:debit`, posted: false, why: "payment declined (insufficient_funds)" });
  }
  for (const r of world.refunds) {
    if (r.told === "applied") expectations.push({ key: `api:${r.clientReference}:refund`, posted: true, why: "refund answered 201" });
    if (r.told === "declined") expectations.push({ key: `api:${r.clientReference}:refund`, posted: false, why: "refund declined" });
  }
  for (const o of world.isoOriginals) {
    if (o.responseCode === undefined) continue;
    expectations.push({ key: o.effectKey, posted: o.responseCode === "00", why: `card request answered ${o.responseCode}` });
  }
  for (const r of world.isoReversals) {
    if (!r.acknowledged || r.original.responseCode !== "00") continue;
    const undo = r.original.effectKey.replace(/:hold$/, ":release").replace(/:posting$/, ":reversal");
    expectations.push({ key: undo, posted: true, why: "reversal of an approved original acknowledged 00" });
  }
  const found = await existingTransfers(pool, world.tenantId, expectations.map((e) => e.key));
  for (const e of expectations) {
    if (found.has(e.key) !== e.posted) violations.push({ invariant: "acknowledgedMeansPosted", subject: e.key, expected: e.posted ? `posted (${e.why})` : `not posted (${e.why})`, found: found.has(e.key) ? "posted" : "absent" });
  }
  const ach = await achEffectivePostings(input);
  for (const file of world.files) {
    for (const naturalKey of file.reportedApplied ?? []) {
      if ((ach.get(naturalKey)?.effective ?? 0) < 1) violations.push({ invariant: "acknowledgedMeansPosted", subject: naturalKey, expected: `one effective posting (file ${file.name} reported it applied)`, found: `${ach.get(naturalKey)?.effective ?? 0}` });
    }
  }
  return violations;
}

// Guards: every dedup decision a client saw answered (replay, in progress, duplicate reference, duplicate or conflicting record, card repeat, review decision) left its dedup record.
async function dedupDecisionsRecorded({ world, pool }: InvariantInput): Promise<Violation[]> {
  const violations: Violation[] = [];
  const seen = [...world.dedupSeen].map(([entry, times]) => ({ entry, times, ...dedupEntryParts(entry) }));
  // One read per kind of record, whatever the number of entries (a read each grew with the run).
  const found = await countDedupRecords(pool, world.tenantId, seen);
  for (const [i, s] of seen.entries()) {
    const n = found[i] ?? 0n;
    if (s.channel === "ach-file") {
      // A file's record is its own dedup record: its outcome row, with the reason and the original (decision 0053).
      if (n !== 1n) violations.push({ invariant: "dedupDecisionsRecorded", subject: `${s.channel} ${s.key}`, expected: `one record_outcome ${s.reason} with its code and original_ref`, found: String(n) });
      continue;
    }
    const wanted = s.channel === "review" ? 1n : BigInt(s.times);
    if (n < wanted) violations.push({ invariant: "dedupDecisionsRecorded", subject: `${s.channel} ${s.key}`, expected: `>= ${wanted} dedup_event ${s.reason}`, found: String(n) });
  }
  const answered = [...world.answeredKeys].map((k) => k.split("|") as [string, string]);
  const { rows } = await pool.query<{ endpoint: string; idem_key: string }>(
    `SELECT endpoint, idem_key FROM idempotency_record WHERE tenant_id = $1 AND state = 'completed'
        AND (endpoint, idem_key) IN (SELECT * FROM unnest($2::text[], $3::text[]))`,
    [world.tenantId, answered.map(([e]) => e), answered.map(([, k]) => k)]);
  const kept = new Set(rows.map((r) => `${r.endpoint}|${r.idem_key}`));
  for (const key of world.answeredKeys) {
    if (!kept.has(key)) violations.push({ invariant: "dedupDecisionsRecorded", subject: `idempotency record ${key}`, expected: "completed (its answer was given)", found: "absent" });
  }
  return violations;
}

/** channel|key|reason, where the key of a file's record is itself file id|natural key. */
function dedupEntryParts(entry: string): { channel: string; key: string; reason: string } {
  const parts = entry.split("|");
  return { channel: parts[0] as string, key: parts.slice(1, -1).join("|"), reason: parts[parts.length - 1] as string };
}

/** For each entry, in order: how many dedup records it left (outcome rows for a file's record). */
async function countDedupRecords(
  pool: Pool, tenantId: string, seen: Array<{ channel: string; key: string; reason: string }>,
): Promise<bigint[]> {
  const { rows } = await pool.query<{ i: number; n: bigint }>(
    `SELECT s.i, CASE
        WHEN s.channel = 'ach-file' THEN (SELECT count(*) FROM record_outcome o
          WHERE o.tenant_id = $1 AND o.file_id = split_part(s.key, '|', 1)
            AND o.natural_key = substr(s.key, length(split_part(s.key, '|', 1)) + 2)
            AND o.outcome = s.reason AND o.code IS NOT NULL AND o.original_ref IS NOT NULL)
        WHEN s.channel = 'review' THEN (SELECT count(*) FROM dedup_event d
          WHERE d.tenant_id = $1 AND d.scope = 'review:' || s.key)
        ELSE (SELECT count(*) FROM dedup_event d WHERE d.tenant_id = $1 AND d.channel = s.channel
          AND d.dedup_key = s.key AND starts_with(d.reason, s.reason)) END AS n
       FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS s(channel, key, reason, i)`,
    [tenantId, seen.map((s) => s.channel), seen.map((s) => s.key), seen.map((s) => s.reason)]);
  const counts: bigint[] = new Array<bigint>(seen.length).fill(0n);
  for (const row of rows) counts[Number(row.i) - 1] = BigInt(row.n);
  return counts;
}

// Guards: a card scheme always gets an answer it can match to its request (MTI, STAN, terminal); an unmatched answer makes the acquirer retry or reverse blind.
async function everyCardRequestAnswered({ world }: InvariantInput): Promise<Violation[]> {
  return world.isoUnanswered.map((u) => ({
    invariant: "everyCardRequestAnswered", subject: `${u.mti} STAN ${u.stan} (${u.naturalKey}, step ${u.step})`,
    expected: "a response with the request's STAN",
    found: u.strays.length > 0 ? `none matched; answers that matched no request (response MTI:STAN:terminal): ${u.strays.join(", ")}` : "no answer",
  }));
}

/** Dates balances are read on, one per check in turn: before, inside and after the drawn span. */
const asOfDates = ["2026-11-21", "2026-11-27", "2026-12-05", "2026-12-24", "2026-12-28", "2027-01-04"];

interface OnDateRow {
  account_id: string; kind: AccountKind; available_rule: string;
  bd: string; bc: string; sd: string; sc: string; ld: string; lc: string; ed: string; ec: string;
}

/** Available by the account's rule (decision 0102), from the hand sums: late = booked and settled, early = either. */
function expectedAvailable(row: OnDateRow, booked: bigint): bigint {
  if (row.available_rule === "booked") return booked;
  const creditNormal = accountKinds[row.kind].normalSide === "C";
  return creditNormal ? BigInt(row.lc) - BigInt(row.ed) : BigInt(row.ld) - BigInt(row.ec);
}

// Guards: a balance read on a date (booked by value date, settled by the transfers' settlement dates, decision 0102) is the hand sum of exactly those entries.
async function balancesOnDateEqualEntries({ world, pool, baseUrl }: InvariantInput): Promise<Violation[]> {
  const asOf = asOfDates[world.step % asOfDates.length] as string;
  const { rows } = await pool.query<OnDateRow>(
    `SELECT a.account_id, a.kind, a.available_rule,
            coalesce(sum(e.amount_minor) FILTER (WHERE e.direction = 'D' AND greatest(e.value_date, coalesce(t.settlement_date, t.value_date)) <= $2), 0)::text AS ld,
            coalesce(sum(e.amount_minor) FILTER (WHERE e.direction = 'C' AND greatest(e.value_date, coalesce(t.settlement_date, t.value_date)) <= $2), 0)::text AS lc,
            coalesce(sum(e.amount_minor) FILTER (WHERE e.direction = 'D' AND least(e.value_date, coalesce(t.settlement_date, t.value_date)) <= $2), 0)::text AS ed,
            coalesce(sum(e.amount_minor) FILTER (WHERE e.direction = 'C' AND least(e.value_date, coalesce(t.settlement_date, t.value_date)) <= $2), 0)::text AS ec,
            coalesce(sum(e.amount_minor) FILTER (WHERE e.direction = 'D' AND e.value_date <= $2), 0)::text AS bd,
            coalesce(sum(e.amount_minor) FILTER (WHERE e.direction = 'C' AND e.value_date <= $2), 0)::text AS bc,
            coalesce(sum(e.amount_minor) FILTER (WHERE e.direction = 'D' AND coalesce(t.settlement_date, t.value_date) <= $2), 0)::text AS sd,
            coalesce(sum(e.amount_minor) FILTER (WHERE e.direction = 'C' AND coalesce(t.settlement_date, t.value_date) <= $2), 0)::text AS sc
       FROM account a
       LEFT JOIN ledger_entry e ON e.tenant_id = a.tenant_id AND e.account_id = a.account_id
       LEFT JOIN transfer t ON t.tenant_id = e.tenant_id AND t.transfer_key = e.transfer_key
      WHERE a.tenant_id = $1 GROUP BY a.account_id, a.kind, a.available_rule ORDER BY a.account_id`, [world.tenantId, asOf]);
  const violations: Violation[] = [];
  // One read per account of the world (a handful), all at once: a check waits for the slowest.
  const answers = await Promise.all(rows.map((row) => httpCall(baseUrl, world.apiKey, "GET",
    `/v1/accounts/${encodeURIComponent(row.account_id)}/balance?as_of=${asOf}&kind=settled`)));
  for (const [i, row] of rows.entries()) {
    const api = answers[i];
    if (api === undefined) throw new Error(`no balance read for ${row.account_id}`);
    const read = api.kind === "answer" && api.status === 200 ? api.json : undefined;
    const booked = signedBalance(row.kind, BigInt(row.bd), BigInt(row.bc));
    const expected = {
      booked, settled: signedBalance(row.kind, BigInt(row.sd), BigInt(row.sc)),
      available: expectedAvailable(row, booked),
    };
    for (const kind of ["booked", "settled", "available"] as const) {
      const text = read?.[kind];
      const found = typeof text === "string" ? minorOf(text) : undefined;
      if (found !== expected[kind]) {
        violations.push({ invariant: "balancesOnDateEqualEntries", subject: `${row.account_id} ${kind} on ${asOf}`, expected: minorText(expected[kind]), found: found === undefined ? JSON.stringify(api) : minorText(found) });
      }
    }
  }
  return violations;
}

// Guards: no ACH record's transfer settles on a day the Federal Reserve is closed (its effective date rolled to a business day, decision 0101).
async function achSettlesOnBusinessDays({ world, pool }: InvariantInput): Promise<Violation[]> {
  const { rows } = await pool.query<{ settles: string; keys: string }>(
    `SELECT to_char(t.settlement_date, 'YYYY-MM-DD') AS settles, min(t.transfer_key) AS keys
       FROM record_key k JOIN transfer t ON t.tenant_id = k.tenant_id AND t.transfer_key = k.transfer_key
      WHERE k.tenant_id = $1 AND k.channel = 'ach' AND t.settlement_date IS NOT NULL
      GROUP BY t.settlement_date`, [world.tenantId]);
  const fed = calendarOfCurrency("USD");
  if (!fed) return [{ invariant: "achSettlesOnBusinessDays", subject: "USD", expected: "a calendar", found: "none shipped" }];
  return rows.flatMap((row) => {
    const date = calendarDateOf(row.settles);
    if (date.ok && fed.isBusinessDay(date.value)) return [];
    return [{ invariant: "achSettlesOnBusinessDays", subject: row.keys, expected: `a business day of ${fed.name}`, found: row.settles }];
  });
}

/** The invariants in the order they are checked; the first that fails stops the run. */
export const invariants: ReadonlyArray<[string, Invariant]> = [
  ["ledgerVerifyClean", ledgerVerifyClean],
  ["noCustomerBelowZero", noCustomerBelowZero],
  ["balancesReadEqualEntries", balancesReadEqualEntries],
  ["balancesOnDateEqualEntries", balancesOnDateEqualEntries],
  ["achSettlesOnBusinessDays", achSettlesOnBusinessDays],
  ["atMostOneEffectivePostingPerKey", atMostOneEffectivePostingPerKey],
  ["acknowledgedMeansPosted", acknowledgedMeansPosted],
  ["dedupDecisionsRecorded", dedupDecisionsRecorded],
  ["everyCardRequestAnswered", everyCardRequestAnswered],
];

export async function checkInvariants(input: InvariantInput): Promise<Violation[]> {
  const violations: Violation[] = [];
  for (const [name, invariant] of invariants) {
    const startedMs = Date.now();
    violations.push(...(await invariant(input)));
    input.timingMs?.set(name, (input.timingMs.get(name) ?? 0) + Date.now() - startedMs);
  }
  return violations;
}
