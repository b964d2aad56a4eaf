import { createHash } from "node:crypto";
import { assert } from "../assert.ts";
import { limits } from "../config/limits.ts";
import type { Queryable } from "../db/pool.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { writeCamt053, type Camt053Entry } from "../protocols/iso20022/camt053-writer.ts";
import { accountKinds, type AccountKind } from "./account-kinds.ts";

/**
 * An account's end-of-day statement (issue 30 item 5): the entries booked on a day (by value
 * date, as the booked balance counts them, docs/decisions/0102) between the booked balance at
 * the end of the day before (OPBD) and at the end of the day (CLBD). Each entry's BookgDt is the
 * day; its ValDt is its transfer's settlement date (0101), the day its money settles.
 * Directions and balances are the account holder's: what raises the balance on the account's
 * normal side is a credit (CRDT), so a settlement account's debit entry is a CRDT of the bank
 * statement we would receive for it.
 */
export interface DayStatement {
  accountId: string;
  kind: AccountKind;
  currency: string;
  date: string;
  openingMinor: bigint;
  closingMinor: bigint;
  entries: Array<Camt053Entry & { entryKey: string; transferKey: string }>;
}

// One statement, one snapshot: the opening sums and the day's entries agree with each other.
const DAY_STATEMENT_SQL = `
  SELECT a.kind, a.currency,
         (SELECT coalesce(sum(CASE e.direction WHEN 'D' THEN e.amount_minor
                                               ELSE -e.amount_minor END), 0)::text
            FROM ledger_entry e
           WHERE e.tenant_id = a.tenant_id AND e.account_id = a.account_id
             AND e.value_date < $3::date) AS opening_debits_less_credits,
         (SELECT coalesce(json_agg(json_build_object(
                   'entry_key', d.entry_key, 'transfer_key', d.transfer_key, 'kind', d.kind,
                   'direction', d.direction, 'amount_minor', d.amount_minor::text,
                   'settles', d.settles) ORDER BY d.created_at, d.entry_key), '[]'::json)
            FROM (SELECT e.entry_key, e.transfer_key, t.kind, e.direction, e.amount_minor,
                         e.created_at,
                         to_char(coalesce(t.settlement_date, t.value_date), 'YYYY-MM-DD')
                           AS settles
                    FROM ledger_entry e
                    JOIN transfer t
                      ON t.tenant_id = e.tenant_id AND t.transfer_key = e.transfer_key
                   WHERE e.tenant_id = a.tenant_id AND e.account_id = a.account_id
                     AND e.value_date = $3::date
                   ORDER BY e.created_at, e.entry_key
                   LIMIT $4) d) AS entries
    FROM account a
   WHERE a.tenant_id = $1 AND a.account_id = $2`;

interface DayRow {
  kind: AccountKind; currency: string; opening_debits_less_credits: string;
  entries: Array<{
    entry_key: string; transfer_key: string; kind: string; direction: "D" | "C";
    amount_minor: string; settles: string;
  }>;
}

/** A reference of at most 35 characters that stays the same for the same text. */
export function shortRef(prefix: string, text: string): string {
  return `${prefix}${createHash("sha256").update(text).digest("hex").slice(0, 32)}`;
}

export function previousDay(date: string): string {
  const day = new Date(`${date}T00:00:00Z`);
  day.setUTCDate(day.getUTCDate() - 1);
  return day.toISOString().slice(0, 10);
}

/** The day's statement of the account; undefined: no such account. */
export async function dayStatement(
  db: Queryable, tenantId: string, accountId: string, date: string,
): Promise<Result<DayStatement, Finding> | undefined> {
  assert(/^\d{4}-\d{2}-\d{2}$/.test(date), `statement date ${date} is YYYY-MM-DD`);
  const entriesMax = limits.ledger.dayStatementEntriesMax;
  const { rows } = await db.query<DayRow>(
    { name: "clearline.ledger.day-statement", text: DAY_STATEMENT_SQL },
    [tenantId, accountId, date, entriesMax + 1]);
  const row = rows[0];
  if (row === undefined) return undefined;
  if (row.entries.length > entriesMax) {
    const message = `more than ${entriesMax} entries booked on ${date}: a statement in pages `
      + "is not written";
    return fail(finding("LEDGER_STATEMENT_TOO_LARGE", message, { field: "date" }));
  }
  const normalSide = accountKinds[row.kind].normalSide;
  const holderSign = (debitsLessCredits: bigint) =>
    normalSide === "D" ? debitsLessCredits : -debitsLessCredits;
  const openingMinor = holderSign(BigInt(row.opening_debits_less_credits));
  let closingMinor = openingMinor;
  const entries = row.entries.map((e, i) => {
    const amountMinor = BigInt(e.amount_minor);
    const direction: "C" | "D" = e.direction === normalSide ? "C" : "D";
    closingMinor += direction === "C" ? amountMinor : -amountMinor;
    return {
      entryKey: e.entry_key, transferKey: e.transfer_key,
      entryRef: String(i + 1), accountServicerRef: shortRef("CL", e.entry_key),
      amountMinor, direction, bookingDate: date, valueDate: e.settles,
      bankTransactionCode: e.kind.slice(0, 35),
      additionalInformation: e.entry_key.length <= 500 ? e.entry_key
        : `${e.entry_key.slice(0, 497)}...`,
    };
  });
  return ok({
    accountId, kind: row.kind, currency: row.currency, date, openingMinor, closingMinor, entries,
  });
}

/** The statement as a camt.053.001.08 document, created at `creationDateTime`. */
export function dayStatementCamt053(
  statement: DayStatement, creationDateTime: string,
): Result<string, Finding> {
  const compactDate = statement.date.replaceAll("-", "");
  const written = writeCamt053({
    messageId: shortRef(compactDate, `${statement.accountId} ${creationDateTime}`).slice(0, 35),
    creationDateTime,
    statementId: shortRef(compactDate, statement.accountId).slice(0, 35),
    accountId: statement.accountId.length <= 34 ? statement.accountId
      : shortRef("CL", statement.accountId),
    accountName: statement.accountId.slice(0, 70),
    currency: statement.currency,
    openingDate: previousDay(statement.date), statementDate: statement.date,
    openingMinor: statement.openingMinor, closingMinor: statement.closingMinor,
    entries: statement.entries,
  });
  if (written.ok) return written;
  const first = written.error[0];
  assert(first !== undefined, "a refused statement names why");
  return fail(first);
}
