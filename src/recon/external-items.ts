import { createHash } from "node:crypto";
import { limits } from "../config/limits.ts";
import type { Pool, Queryable } from "../db/pool.ts";
import { withTransaction, type Tx } from "../db/transaction.ts";
import { fail, finding, findingView, ok, type Finding, type Result } from "../errors/finding.ts";
import type { Position } from "../errors/position.ts";
import { minorToDecimal } from "../protocols/iso4217/currency.ts";
import { findAccount } from "../ledger/index.ts";
import type {
  ExternalItem, ExternalStatementHead, ForeignCurrencyDetail,
} from "../protocols/statement/external-item.ts";
import {
  statementFingerprintOf, readExternalItems, type ExternalFormat, type ExternalRead,
} from "./read-external-file.ts";
import { bufferSource, type StatementSource } from "./statement-source.ts";

export interface ImportSummary {
  importId: string;
  accountId: string;
  format: ExternalFormat;
  items: number;              // new items stored by this import
  // items already known from an earlier import (same identity, same content)
  seenBefore: number;
  // items their side listed twice (kept, reported by runs as duplicate_on_their_side)
  duplicates: number;
  alreadyImported: boolean;   // the same bytes were imported before: nothing changed
  statement: ExternalStatementHead;
  warnings: Finding[];
}

/**
 * An import as the HTTP API and `clearline recon import --json` show it (docs/decisions/0107):
 * snake_case; the statement's opening and closing balances in minor units as strings.
 */
export function importSummaryView(s: ImportSummary): Record<string, unknown> {
  const head = s.statement;
  return {
    import_id: s.importId, account: s.accountId, format: s.format, items: s.items,
    seen_before: s.seenBefore, duplicates: s.duplicates, already_imported: s.alreadyImported,
    statement: {
      statement_ref: head.statementRef ?? null, account_identifier: head.accountIdentifier ?? null,
      currency: head.currency ?? null, opening_minor: head.openingMinor?.toString() ?? null,
      closing_minor: head.closingMinor?.toString() ?? null,
    },
    warnings: s.warnings.map(findingView),
  };
}

const formatUnknownMessage =
  "the file is neither camt.053/054 XML, a NACHA file, nor a CSV with an amount column";

/** The account a statement is imported into, or why it cannot be, before the file is read. */
async function importableAccount(
  db: Queryable, input: { tenantId: string; accountId: string }, byteLength: number,
): Promise<Result<{ currency: string }, Finding[]>> {
  const account = await findAccount(db, input.tenantId, input.accountId);
  if (!account) {
    const why = `account ${input.accountId} does not exist`;
    return fail([finding("LEDGER_ACCOUNT_UNKNOWN", why, { field: "account" })]);
  }
  if (account.kind !== "settlement") {
    const why = `account ${input.accountId} is a ${account.kind} account`;
    return fail([finding("RECON_ACCOUNT_NOT_RECONCILABLE", why, { field: "account" })]);
  }
  if (byteLength > limits.recon.fileBytesMax) {
    const why = `the file exceeds ${limits.recon.fileBytesMax} bytes`;
    const at = { byteOffset: limits.recon.fileBytesMax };
    return fail([finding("RECON_ENTRIES_TOO_MANY", why, at)]);
  }
  return ok(account);
}

/**
 * Imports the other side of a reconciliation for one settlement account, idempotently: the same
 * bytes again change nothing; an item whose identity an earlier import brought with the same
 * content is counted as seen before; one listed twice, or again with other content, is kept as a
 * duplicate of the first. Any error in the file refuses it whole (nothing stored). The file is
 * streamed (docs/decisions/0040): read once for its identity, then again for its items, which
 * are stored in batches as they are read; a refusal found later in the file undoes the batches
 * already stored (the import's savepoint). `content` is a source held in memory.
 */
export async function importExternalFile(
  pool: Pool, input: ImportInput,
): Promise<Result<ImportSummary, Finding[]>> {
  const prepared = await prepareImport(pool, input);
  if (prepared.kind === "answered") return prepared.answer;
  return withTransaction(pool, (tx) => storeImport(tx, input, prepared));
}

/**
 * The import in the caller's transaction (HTTP: the Idempotency-Key's claim commits with it),
 * for content held in memory: the same answers as importExternalFile.
 */
export async function importExternalFileInTransaction(
  tx: Tx, input: ImportInput & { content: Buffer },
): Promise<Result<ImportSummary, Finding[]>> {
  const prepared = await prepareImport(tx, input);
  if (prepared.kind === "answered") return prepared.answer;
  return storeImport(tx, input, prepared);
}

type ImportInput = {
  tenantId: string; accountId: string; name: string; format?: ExternalFormat;
} & ({ content: Buffer } | { source: StatementSource });

/** What is known of an import before it is stored: its account, identity and format. */
interface PreparedImport {
  kind: "prepared";
  source: StatementSource;
  account: { currency: string };
  importId: string;
  sha256: string;
  format: ExternalFormat;
}

type Prepared = PreparedImport | { kind: "answered"; answer: Result<ImportSummary, Finding[]> };

/** The account checked, the bytes' identity read; an import of the same bytes is answered. */
async function prepareImport(db: Queryable, input: ImportInput): Promise<Prepared> {
  const source = "source" in input ? input.source : bufferSource(input.content);
  const checked = await importableAccount(db, input, source.byteLength);
  if (!checked.ok) return { kind: "answered", answer: checked };
  const fingerprint = await statementFingerprintOf(source);
  const identity = `${input.tenantId}\u0000${input.accountId}\u0000${fingerprint.sha256}`;
  const importId = `rim_${createHash("sha256").update(identity).digest("hex").slice(0, 24)}`;
  const earlier = await importSummaryOf(db, input.tenantId, importId);
  if (earlier) return { kind: "answered", answer: ok({ ...earlier, alreadyImported: true }) };
  const chosen = input.format ?? fingerprint.format;
  if (!chosen) {
    const unknown = finding("RECON_FORMAT_UNKNOWN", formatUnknownMessage, {});
    return { kind: "answered", answer: fail([unknown]) };
  }
  return {
    kind: "prepared", source, account: checked.value, importId, sha256: fingerprint.sha256,
    format: chosen,
  };
}

async function storeImport(
  tx: Tx, input: ImportInput, prepared: PreparedImport,
): Promise<Result<ImportSummary, Finding[]>> {
  const { source, account, importId, format: chosen } = prepared;
  const fingerprint = { sha256: prepared.sha256 };
  await tx.query("SAVEPOINT recon_import");
  // The import row first (its items refer to it); a concurrent import of the same bytes waits
  // here on the unique content hash and then finds it imported.
  const claimed = await tx.query(
    `INSERT INTO recon_import (tenant_id, import_id, account_id, format, name, content_sha256,
       statement_ref, items, duplicates, findings)
     VALUES ($1, $2, $3, $4, $5, $6, NULL, 0, 0, '[]')
     ON CONFLICT DO NOTHING`,
    [input.tenantId, importId, input.accountId, chosen, input.name, fingerprint.sha256],
  );
  if (claimed.rowCount === 0) {
    return ok({
      ...((await importSummaryOf(tx, input.tenantId, importId)) as ImportSummary),
      alreadyImported: true,
    });
  }
  const store = itemStore(tx, input.tenantId, input.accountId, importId);
  const foreign = foreignItemWarnings(account.currency);
  const batchItemsMax = limits.recon.insertBatchItemsMax;
  const read = await readExternalItems(source, chosen, limits.recon, batchItemsMax,
    async (items) => {
      // An entry in another currency is kept for a person, not a reason to refuse the rest
      // (decision 0104); a statement of an account in another currency is refused below.
      foreign.note(items);
      await store.add(items);
    },
  );
  const refusal = refusalOf(read, account.currency, input.accountId, fingerprint.sha256);
  if (!read.ok || refusal.length > 0) {
    await tx.query("ROLLBACK TO SAVEPOINT recon_import");
    return fail(refusal);
  }
  const summary = { ...read.value, findings: [...read.value.findings, ...foreign.warnings()] };
  return ok(await recordImport(tx, input, importId, summary, store.counts));
}


/** The import's row completed with what was stored, and its summary. */
async function recordImport(
  tx: Tx, input: { tenantId: string; accountId: string }, importId: string, read: ExternalRead,
  counts: StoredCounts,
): Promise<ImportSummary> {
  const { format, head, findings } = read;
  const warnings = findings.filter((f) => f.severity !== "error");
  await tx.query(
    `UPDATE recon_import
        SET statement_ref = $3, items = $4, duplicates = $5, findings = $6
      WHERE tenant_id = $1 AND import_id = $2`,
    [
      input.tenantId, importId, head.statementRef ?? null, counts.items, counts.duplicates,
      JSON.stringify(warnings),
    ],
  );
  return {
    importId, accountId: input.accountId, format, ...counts, alreadyImported: false,
    statement: head, warnings,
  };
}

/**
 * Why a read file is refused (nothing when it is not): its errors, else a statement of an account
 * in another currency, else bytes other than those it was identified by.
 */
function refusalOf(
  read: Result<ExternalRead, Finding[]>, currency: string, accountId: string,
  claimedSha256: string,
): Finding[] {
  if (!read.ok) return read.error;
  const errors = read.value.findings.filter((f) => f.severity === "error");
  if (errors.length > 0) return errors;
  const fileCurrency = read.value.head.currency;
  if (fileCurrency !== undefined && fileCurrency !== currency) {
    return [
      finding(
        "RECON_CURRENCY_MISMATCH",
        `the file is in ${fileCurrency}, account ${accountId} in ${currency}`,
        { field: "currency" },
      ),
    ];
  }
  // Its identity was taken on the first reading: items from other bytes would be stored under it.
  if (read.value.sha256 !== claimedSha256) {
    return [finding("RECON_FILE_CHANGED", "the file changed while it was imported", {})];
  }
  return [];
}

/**
 * One warning per item in another currency than the account's, naming it and the amount in the
 * account's currency its statement gives (decision 0104); at most limits.recon.findingsMax, then
 * a count.
 */
function foreignItemWarnings(accountCurrency: string): {
  note(items: ExternalItem[]): void;
  warnings(): Finding[];
} {
  const named: Finding[] = [];
  let count = 0;
  return {
    note(items) {
      for (const item of items) {
        if (item.currency === accountCurrency) continue;
        count++;
        if (named.length >= limits.recon.findingsMax) continue;
        named.push(foreignItemWarning(item, accountCurrency));
      }
    },
    warnings() {
      if (count <= named.length) return named;
      return [...named, finding("RECON_ITEM_FOREIGN_CURRENCY",
        `${count - named.length} more entries in another currency than ${accountCurrency}`, {},
        { severity: "warning" })];
    },
  };
}

function foreignItemWarning(item: ExternalItem, accountCurrency: string): Finding {
  const amount = `${minorToDecimal(item.amountMinor, item.currency)} ${item.currency}`;
  const inAccount = item.foreign?.accountAmountMinor;
  const exchange = item.foreign?.exchange?.rate ? ` at rate ${item.foreign.exchange.rate}` : "";
  const stated = inAccount === undefined
    ? `the statement gives no amount in ${accountCurrency}`
    : `the statement gives ${minorToDecimal(inAccount, accountCurrency)} ${accountCurrency}` +
      exchange;
  return finding(
    "RECON_ITEM_FOREIGN_CURRENCY",
    `entry ${item.itemKey} is ${amount} on a ${accountCurrency} account (${stated}): kept as an ` +
    `item for a person, never matched by itself`,
    positionOf(item), { severity: "warning" },
  );
}

/** A foreign-currency detail as stored (recon_external_item.foreign_detail): amounts as text. */
function storedForeignDetail(detail: ForeignCurrencyDetail): object {
  return {
    ...detail,
    accountAmountMinor: detail.accountAmountMinor?.toString(),
    amounts: detail.amounts.map((a) => ({ ...a, amountMinor: a.amountMinor.toString() })),
  };
}

/** An item's position as a finding's: "line N" of a CSV or ACH file, else an XML path. */
function positionOf(item: ExternalItem): Position {
  const line = /^line (\d+)$/.exec(item.position);
  return line ? { line: Number(line[1]) } : { xmlPath: item.position };
}

async function importSummaryOf(
  db: Queryable, tenantId: string, importId: string,
): Promise<ImportSummary | undefined> {
  const { rows } = await db.query<{
    account_id: string;
    format: ExternalFormat;
    items: number;
    duplicates: number;
    statement_ref: string | null;
    findings: Finding[];
  }>(
    `SELECT account_id, format, items, duplicates, statement_ref, findings
     FROM recon_import
     WHERE tenant_id = $1 AND import_id = $2`,
    [tenantId, importId],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    importId, accountId: row.account_id, format: row.format, items: row.items, seenBefore: 0,
    duplicates: row.duplicates, alreadyImported: false,
    statement: row.statement_ref ? { statementRef: row.statement_ref } : {}, warnings: row.findings,
  };
}

interface StoredCounts {
  items: number;
  seenBefore: number;
  duplicates: number;
}

/**
 * Stores items batch by batch as they are read (each batch one INSERT of at most
 * limits.recon.insertBatchItemsMax) and sorts out repeats: of an identity this file listed before
 * (in this batch, or stored by this import: the database remembers the file's identities, this
 * process only the batch's), and of one an earlier import stored.
 */
function itemStore(
  tx: Tx, tenantId: string, accountId: string, importId: string,
): { counts: StoredCounts; add(items: ExternalItem[]): Promise<void> } {
  const counts: StoredCounts = { items: 0, seenBefore: 0, duplicates: 0 };
  return {
    counts,
    async add(batch) {
      const fresh: ExternalItem[] = [];
      const repeated: ExternalItem[] = [];
      const inThisBatch = new Set<string>();
      for (const item of batch) {
        if (inThisBatch.has(item.itemKey)) repeated.push(item);
        else {
          inThisBatch.add(item.itemKey);
          fresh.push(item);
        }
      }
      const inserted = await insertItems(tx, tenantId, accountId, importId, fresh);
      const known = fresh.filter((item) => !inserted.has(item.itemKey));
      const { same, booked } = await sameAsStored(tx, tenantId, accountId, importId, known);
      await markBooked(tx, tenantId, accountId, booked);
      counts.items += inserted.size;
      counts.seenBefore += same.size;
      const duplicates = [...repeated, ...known.filter((item) => !same.has(item.itemKey))];
      await insertItems(
        tx,
        tenantId,
        accountId,
        importId,
        duplicates.map((item) => ({
          ...item, itemKey: `${item.itemKey}#dup:${importId}:${item.position}`,
          duplicateOf: item.itemKey,
        })),
      );
      counts.duplicates += duplicates.length;
    },
  };
}

async function insertItems(
  tx: Tx, tenantId: string, accountId: string, importId: string,
  items: Array<ExternalItem & { duplicateOf?: string }>,
): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  const { rows } = await tx.query<{ item_key: string }>(
    `INSERT INTO recon_external_item (
       tenant_id, account_id, item_key, import_id, position, booking_date, value_date, direction,
       amount_minor, currency, status, refs, parts, description, duplicate_of, foreign_detail)
     SELECT $1, $2, i.item_key, $3, i.position, i.booking_date::date, i.value_date::date,
            i.direction, i.amount_minor, i.currency, i.status,
            CASE WHEN i.refs = '' THEN '{}'::text[] ELSE string_to_array(i.refs, chr(31)) END,
            i.parts::jsonb, i.description, i.duplicate_of, i.foreign_detail::jsonb
       FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bigint[],
                   $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[],
                   $16::text[])
            AS i(item_key, position, booking_date, value_date, direction, amount_minor, currency,
                 status, refs, parts, description, duplicate_of, foreign_detail)
     ON CONFLICT (tenant_id, account_id, item_key) DO NOTHING
     RETURNING item_key`,
    [
      tenantId,
      accountId,
      importId,
      items.map((i) => i.itemKey),
      items.map((i) => i.position),
      items.map((i) => i.bookingDate),
      items.map((i) => i.valueDate ?? null),
      items.map((i) => i.direction),
      items.map((i) => i.amountMinor.toString()),
      items.map((i) => i.currency),
      items.map((i) => i.status),
      items.map((i) => i.refs.join("\u001f")),
      items.map((i) =>
        JSON.stringify(
          i.parts.map((p) => ({
            ...(p.amountMinor === undefined ? {} : { amountMinor: p.amountMinor.toString() }),
            refs: p.refs,
          })),
        ),
      ),
      items.map((i) => i.description ?? null),
      items.map((i) => i.duplicateOf ?? null),
      items.map((i) => (i.foreign ? JSON.stringify(storedForeignDetail(i.foreign)) : null)),
    ],
  );
  return new Set(rows.map((r) => r.item_key));
}

/**
 * Of items whose identity is already stored by an earlier import, those stored with the same
 * direction and amount (the same item seen again), and among them those stored pending that this
 * file books. One stored by this import is a repeat within the file: never the same item.
 */
async function sameAsStored(
  tx: Tx, tenantId: string, accountId: string, importId: string, items: ExternalItem[],
): Promise<{ same: Set<string>; booked: ExternalItem[] }> {
  if (items.length === 0) return { same: new Set(), booked: [] };
  const { rows } = await tx.query<{
    item_key: string;
    direction: string;
    amount_minor: string;
    booking_date: string;
    status: string;
  }>(
    `SELECT item_key, direction, amount_minor::text,
            to_char(booking_date, 'YYYY-MM-DD') AS booking_date, status
       FROM recon_external_item
      WHERE tenant_id = $1 AND account_id = $2 AND item_key = ANY($3::text[])
        AND import_id <> $4`,
    [tenantId, accountId, items.map((i) => i.itemKey), importId],
  );
  const stored = new Map(rows.map((r) => [r.item_key, r]));
  const same = items.filter((item) => {
    const row = stored.get(item.itemKey);
    return (
      row !== undefined && row.direction === item.direction &&
      row.amount_minor === item.amountMinor.toString()
    );
  });
  // A pending entry later booked is the same item: its booking is what the later file adds.
  const booked = same.filter(
    (item) => item.status === "booked" && stored.get(item.itemKey)?.status === "pending",
  );
  return { same: new Set(same.map((item) => item.itemKey)), booked };
}

async function markBooked(
  tx: Tx, tenantId: string, accountId: string, items: ExternalItem[],
): Promise<void> {
  if (items.length === 0) return;
  await tx.query(
    `UPDATE recon_external_item i
        SET status = 'booked', booking_date = b.booking_date::date
       FROM unnest($3::text[], $4::text[]) AS b(item_key, booking_date)
      WHERE i.tenant_id = $1 AND i.account_id = $2 AND i.item_key = b.item_key
        AND i.status = 'pending'`,
    [tenantId, accountId, items.map((i) => i.itemKey), items.map((i) => i.bookingDate)],
  );
}
