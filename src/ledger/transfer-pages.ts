import type { Queryable } from "../db/pool.ts";
import { pageOf, rowsToAsk, type ListPage, type ListPlace } from "../db/list-place.ts";
import { transfersWithLegs, type ShownTransfer } from "./stored-transfers.ts";

/** What a page of the tenant's transfers is filtered by (GET /v1/transfers). */
export interface TransferPageQuery {
  after?: ListPlace | undefined;
  kind?: string | undefined;
  valueFrom?: string | undefined;       // a date, inclusive
  valueTo?: string | undefined;         // a date, inclusive
  createdFrom?: string | undefined;     // an instant, inclusive
  createdBefore?: string | undefined;   // an instant, exclusive
  limit: number;
}

/**
 * A page of the tenant's transfers with their legs, in the order of the transactions that posted
 * them (the transaction id each transfer row keeps, indexed since 0001: given at a transaction's
 * first write, growing within a cluster's history) and then by key, so transfers posted while a
 * client pages come after the ones it began with (docs/decisions/0105, with the caveat of a
 * logical restore). The ledger's hot path gains no index for this.
 */
export async function transfersPage(
  db: Queryable, tenantId: string, query: TransferPageQuery,
): Promise<ListPage<ShownTransfer>> {
  const { rows } = await db.query<{ transfer_key: string; place: string }>(
    `SELECT t.transfer_key, t.xact_id::text AS place
       FROM transfer t
      WHERE t.tenant_id = $1
        AND ($2::text IS NULL OR (t.xact_id, t.transfer_key) > ($2::xid8, $3))
        AND ($4::text IS NULL OR t.kind = $4)
        AND ($5::date IS NULL OR t.value_date >= $5)
        AND ($6::date IS NULL OR t.value_date <= $6)
        AND ($7::timestamptz IS NULL OR t.created_at >= $7)
        AND ($8::timestamptz IS NULL OR t.created_at < $8)
      ORDER BY t.xact_id, t.transfer_key
      LIMIT $9`,
    [tenantId, query.after?.position ?? null, query.after?.id ?? null, query.kind ?? null,
      query.valueFrom ?? null, query.valueTo ?? null, query.createdFrom ?? null,
      query.createdBefore ?? null, rowsToAsk(query.limit)]);
  const keys = pageOf(rows, query.limit, (row) => row.transfer_key,
    (row) => ({ position: row.place, id: row.transfer_key }));
  const shown = new Map((await transfersWithLegs(db, tenantId, keys.items))
    .map((transfer) => [transfer.transferKey, transfer]));
  return {
    items: keys.items.flatMap((key) => shown.get(key) ?? []),
    next: keys.next,
  };
}

/** One transfer by its key, with its legs. */
export async function findTransfer(
  db: Queryable, tenantId: string, transferKey: string,
): Promise<ShownTransfer | undefined> {
  return (await transfersWithLegs(db, tenantId, [transferKey]))[0];
}
