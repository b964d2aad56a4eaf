import { assert } from "../assert.ts";
import type { Queryable } from "../db/pool.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import type { Position } from "../errors/position.ts";
import { calendarDateOf } from "../protocols/calendars/index.ts";
import { accountKinds, type AccountKind } from "./account-kinds.ts";

/**
 * Balances of an account on a date (docs/decisions/0102): booked (entries by value date),
 * settled (by their transfer's settlement date, 0101) and available (by the account's rule).
 */
export const balanceKinds = ["booked", "settled", "available"] as const;
export type BalanceKind = (typeof balanceKinds)[number];

/** The rule an account's available balance follows (account.available_rule, migration 0036). */
export const availableRules = ["booked", "settled-credits"] as const;
export type AvailableRule = (typeof availableRules)[number];

export function isBalanceKind(name: string): name is BalanceKind {
  return (balanceKinds as readonly string[]).includes(name);
}

export function isAvailableRule(name: string): name is AvailableRule {
  return (availableRules as readonly string[]).includes(name);
}

export interface BalancesOnDate {
  accountId: string;
  kind: AccountKind;
  currency: string;
  asOf: string;                 // YYYY-MM-DD
  availableRule: AvailableRule;
  bookedMinor: bigint;          // each signed by the account's normal side
  settledMinor: bigint;
  availableMinor: bigint;
}

/**
 * Every sum in ONE statement over the account's entries and their transfers' dates: one
 * snapshot, so each equals the sum of exactly the entries committed in it, whatever posts or
 * folds meanwhile (0102). `settles` is the transfer's settlement date, its value date for a
 * transfer posted before migration 0035 (0101). For the available balance, `late` entries count
 * when booked AND settled (the later date), `early` ones when booked OR settled (the earlier).
 */
const sumWhere = (direction: "D" | "C", when: string, name: string): string =>
  `coalesce(sum(x.amount_minor) FILTER (WHERE x.direction = '${direction}' AND ${when}), 0)::text
     AS ${name}`;
const BOOKED = "x.value_date <= $3";
const SETTLED = "x.settles <= $3";
const LATE = "greatest(x.value_date, x.settles) <= $3";
const EARLY = "least(x.value_date, x.settles) <= $3";
const BALANCES_ON_DATE_SQL = `
  SELECT a.kind, a.currency, a.available_rule,
         ${sumWhere("D", BOOKED, "booked_debits")}, ${sumWhere("C", BOOKED, "booked_credits")},
         ${sumWhere("D", SETTLED, "settled_debits")}, ${sumWhere("C", SETTLED, "settled_credits")},
         ${sumWhere("D", LATE, "late_debits")}, ${sumWhere("C", LATE, "late_credits")},
         ${sumWhere("D", EARLY, "early_debits")}, ${sumWhere("C", EARLY, "early_credits")}
    FROM account a
    LEFT JOIN LATERAL (
      SELECT e.direction, e.amount_minor, e.value_date,
             coalesce(t.settlement_date, t.value_date) AS settles
        FROM ledger_entry e
        JOIN transfer t ON t.tenant_id = e.tenant_id AND t.transfer_key = e.transfer_key
       WHERE e.tenant_id = a.tenant_id AND e.account_id = a.account_id
    ) x ON true
   WHERE a.tenant_id = $1 AND a.account_id = $2
   GROUP BY a.kind, a.currency, a.available_rule`;

interface SumsRow {
  kind: AccountKind; currency: string; available_rule: AvailableRule;
  booked_debits: string; booked_credits: string; settled_debits: string; settled_credits: string;
  late_debits: string; late_credits: string; early_debits: string; early_credits: string;
}

/** Booked, settled and available balances of the account on `asOf`; undefined: no account. */
export async function balancesOnDate(
  db: Queryable, tenantId: string, accountId: string, asOf: string,
): Promise<BalancesOnDate | undefined> {
  assert(/^\d{4}-\d{2}-\d{2}$/.test(asOf), `as-of date ${asOf} is YYYY-MM-DD`);
  const { rows } = await db.query<SumsRow>(
    { name: "clearline.ledger.balances-on-date", text: BALANCES_ON_DATE_SQL },
    [tenantId, accountId, asOf]);
  const row = rows[0];
  if (row === undefined) return undefined;
  const creditNormal = accountKinds[row.kind].normalSide === "C";
  const signed = (debits: string, credits: string): bigint =>
    creditNormal ? BigInt(credits) - BigInt(debits) : BigInt(debits) - BigInt(credits);
  const bookedMinor = signed(row.booked_debits, row.booked_credits);
  // settled-credits: what raises the balance counts late, what lowers it counts early (0102)
  const availableMinor = row.available_rule === "booked" ? bookedMinor
    : creditNormal ? BigInt(row.late_credits) - BigInt(row.early_debits)
      : BigInt(row.late_debits) - BigInt(row.early_credits);
  return {
    accountId, kind: row.kind, currency: row.currency, asOf, availableRule: row.available_rule,
    bookedMinor, settledMinor: signed(row.settled_debits, row.settled_credits), availableMinor,
  };
}

/** An as-of date as given (CLI, HTTP): a real date the calendars cover, else a finding. */
export function asOfDateOf(text: unknown, position: Position = {}): Result<string, Finding> {
  const date = calendarDateOf(text, position);
  return date.ok ? ok(date.value as string) : date;
}

/** A balance kind as given, else a finding naming the three. */
export function balanceKindOf(
  text: unknown, position: Position = {},
): Result<BalanceKind, Finding> {
  if (typeof text === "string" && isBalanceKind(text)) return ok(text);
  const message = `balance kind ${JSON.stringify(text)}; one of ${balanceKinds.join(", ")}`;
  return fail(finding("LEDGER_BALANCE_KIND_UNKNOWN", message, position));
}

/** The one balance of `kind` out of the three. */
export function balanceOfKind(balances: BalancesOnDate, kind: BalanceKind): bigint {
  if (kind === "booked") return balances.bookedMinor;
  if (kind === "settled") return balances.settledMinor;
  return balances.availableMinor;
}

/** Names the rule an account's available balance follows from now on (0102). */
export async function setAvailableRule(
  db: Queryable, tenantId: string, accountId: string, rule: string,
): Promise<Result<AvailableRule, Finding>> {
  if (!isAvailableRule(rule)) {
    const message = `available rule ${JSON.stringify(rule)}; one of ${availableRules.join(", ")}`;
    return fail(finding("LEDGER_AVAILABLE_RULE_UNKNOWN", message, { field: "available_rule" }));
  }
  const { rowCount } = await db.query(
    "UPDATE account SET available_rule = $3 WHERE tenant_id = $1 AND account_id = $2",
    [tenantId, accountId, rule]);
  if (rowCount !== 1) {
    return fail(finding("LEDGER_ACCOUNT_UNKNOWN", `no account ${accountId}`, { field: "account" }));
  }
  return ok(rule);
}
