import type { Queryable } from "../db/pool.ts";
import type { OurTransfer, TheirItem } from "./matching.ts";

/** Bank-side identities (their own entry references) name nothing of ours: never matched on. */
const theirOwnTags = new Set(["svcr", "ntry"]);

function untagged(ref: string): { tag: string; value: string } {
  const at = ref.indexOf(":");
  return at < 0 ? { tag: "", value: ref } : { tag: ref.slice(0, at), value: ref.slice(at + 1) };
}

function referenceValues(refs: readonly string[]): string[] {
  return refs.map(untagged).filter((r) => !theirOwnTags.has(r.tag) && r.value.length > 0).map((r) => r.value);
}

/** Words of free text that could be a reference: runs of letters, digits and - _ . / */
function wordsOf(text: string | null): string[] {
  return text ? text.split(/[^A-Za-z0-9_\-./]+/).filter((w) => w.length >= 4) : [];
}

interface ItemRow {
  item_key: string; booking_date: string; direction: "C" | "D"; amount_minor: string; currency: string; status: string;
  refs: string; parts: string; description: string | null; duplicate_of: string | null;
}

/** Their side: the account's external items booked (or pending) between the dates. */
export async function theirItems(db: Queryable, tenantId: string, accountId: string, from: string, to: string): Promise<TheirItem[]> {
  const { rows } = await db.query<ItemRow>(
    // refs and parts as plain text: parsing a text[] and a jsonb per row in the driver costs more
    // than the whole match, and most items have one reference and no parts.
    `SELECT item_key, to_char(booking_date, 'YYYY-MM-DD') AS booking_date, direction, amount_minor::text, currency, status,
            array_to_string(refs, chr(31)) AS refs, parts::text AS parts, description, duplicate_of
       FROM recon_external_item WHERE tenant_id = $1 AND account_id = $2 AND booking_date BETWEEN $3::date AND $4::date`,
    [tenantId, accountId, from, to],
  );
  return rows.map((row) => {
    const sign = row.direction === "C" ? 1n : -1n;
    const refs = referenceValues(row.refs === "" ? [] : row.refs.split("\u001f"));
    const parts = row.parts === "[]" ? [] : (JSON.parse(row.parts) as Array<{ amountMinor?: string; refs: string[] }>);
    return {
      itemKey: row.item_key, bookingDate: row.booking_date, amountSigned: sign * BigInt(row.amount_minor), currency: row.currency,
      pending: row.status === "pending", ...(row.duplicate_of ? { duplicateOf: row.duplicate_of } : {}), refs,
      words: () => [...wordsOf(row.description), ...refs.flatMap((r) => wordsOf(r))],
      parts: parts.map((p) => ({ ...(p.amountMinor === undefined ? {} : { amountSigned: sign * BigInt(p.amountMinor) }), refs: referenceValues(p.refs) })),
    };
  });
}

interface TransferRow {
  transfer_key: string; value_date: string; signed_minor: string; currency: string;
  client_reference: string | null; natural_key: string | null; link_id1: string | null; link_id2: string | null;
}

/**
 * Our side: every transfer that moved the (debit-normal) settlement account between the dates,
 * net of its entries there (a debit is money in at the bank: positive), with the references the
 * channel that made it knows: an HTTP payment's client_reference, a file record's natural key
 * and its end-to-end ids (UETR, EndToEndId, ACH trace). Reconciliation corrections are left out:
 * they answer a difference, which keeps its own state; so is a posting together with its
 * compensation when both fall in the period (they net to nothing on the account).
 */
export async function ourTransfers(db: Queryable, tenantId: string, accountId: string, from: string, to: string): Promise<OurTransfer[]> {
  const { rows } = await db.query<TransferRow>(
    `WITH moved AS (
       SELECT e.transfer_key, min(e.value_date) AS value_date, min(e.currency) AS currency,
              sum(CASE e.direction WHEN 'D' THEN e.amount_minor ELSE -e.amount_minor END) AS signed_minor
         FROM ledger_entry e
        WHERE e.tenant_id = $1 AND e.account_id = $2 AND e.value_date BETWEEN $3::date AND $4::date
        GROUP BY e.transfer_key
     )
     SELECT m.transfer_key, to_char(m.value_date, 'YYYY-MM-DD') AS value_date, m.signed_minor::text, m.currency,
            p.client_reference, k.natural_key, k.link_id1, k.link_id2
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
  return rows.map((row) => ({
    transferKey: row.transfer_key, valueDate: row.value_date, amountSigned: BigInt(row.signed_minor), currency: row.currency,
    refs: [row.transfer_key, row.client_reference, row.natural_key, ...[row.link_id1, row.link_id2].map((id) => (id ? untagged(id).value : null))]
      .filter((r): r is string => typeof r === "string" && r.length > 0),
  }));
}
