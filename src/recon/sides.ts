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
  foreign: boolean; account_amount_minor: string | null;
}

/** An item in another currency (decision 0104): its amount in the account's, signed, if given. */
function foreignOf(
  accountAmountMinor: string | null, sign: bigint,
): NonNullable<TheirItem["foreign"]> {
  if (accountAmountMinor === null) return {};
  return { accountAmountSigned: sign * BigInt(accountAmountMinor) };
}

/**
 * Their side as the in-memory matcher needs it: the items of the account over the dates that the
 * set-based matching left (recon_left_item, set-matching.ts).
 */
export async function theirItems(
  db: Queryable, tenantId: string, accountId: string, from: string, to: string,
  accountCurrency: string,
): Promise<TheirItem[]> {
  const { rows } = await db.query<ItemRow>(
    // refs and parts as plain text: parsing a text[] and a jsonb per row in the driver costs more
    // than the whole match, and most items have one reference and no parts.
    `SELECT t.item_key, to_char(t.booking_date, 'YYYY-MM-DD') AS booking_date, t.direction, t.amount_minor::text, t.currency, t.status,
            array_to_string(t.refs, chr(31)) AS refs, t.parts::text AS parts, t.description,
            t.duplicate_of, t.currency <> $5 AS foreign,
            t.foreign_detail->>'accountAmountMinor' AS account_amount_minor
       FROM recon_external_item t JOIN recon_left_item l ON l.item_key = t.item_key
      WHERE t.tenant_id = $1 AND t.account_id = $2 AND t.booking_date BETWEEN $3::date AND $4::date`,
    [tenantId, accountId, from, to, accountCurrency],
  );
  return rows.map((row) => {
    const sign = row.direction === "C" ? 1n : -1n;
    const refs = referenceValues(row.refs === "" ? [] : row.refs.split("\u001f"));
    const parts = row.parts === "[]" ? [] : (JSON.parse(row.parts) as Array<{ amountMinor?: string; refs: string[] }>);
    return {
      itemKey: row.item_key, bookingDate: row.booking_date, amountSigned: sign * BigInt(row.amount_minor), currency: row.currency,
      pending: row.status === "pending", ...(row.duplicate_of ? { duplicateOf: row.duplicate_of } : {}), refs,
      ...(row.foreign ? { foreign: foreignOf(row.account_amount_minor, sign) } : {}),
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
 * Our side as the in-memory matcher needs it: the transfers the set-based matching left
 * (recon_left_transfer, set-matching.ts: net on the account, corrections and compensated pairs
 * already left out; every entry on the account is in its currency), with the references the channel that made each knows: an HTTP payment's
 * client_reference, a file record's natural key and its end-to-end ids (UETR, EndToEndId, ACH trace).
 */
export async function ourTransfers(db: Queryable, tenantId: string, currency: string): Promise<OurTransfer[]> {
  const { rows } = await db.query<TransferRow>(
    `SELECT o.transfer_key, to_char(o.value_date, 'YYYY-MM-DD') AS value_date, o.signed_minor::text, $2::text AS currency,
            p.client_reference, k.natural_key, k.link_id1, k.link_id2
       FROM recon_left_transfer o
       LEFT JOIN payment p ON p.tenant_id = $1 AND p.transfer_key = o.transfer_key
       LEFT JOIN record_key k ON k.tenant_id = $1 AND k.transfer_key = o.transfer_key`,
    [tenantId, currency],
  );
  return rows.map((row) => ({
    transferKey: row.transfer_key, valueDate: row.value_date, amountSigned: BigInt(row.signed_minor), currency: row.currency,
    refs: [row.transfer_key, row.client_reference, row.natural_key, ...[row.link_id1, row.link_id2].map((id) => (id ? untagged(id).value : null))]
      .filter((r): r is string => typeof r === "string" && r.length > 0),
  }));
}
