import type { Queryable } from "../db/pool.ts";
import {
  instantOfMicrosSql, microsOfSql, pageOf, rowsToAsk, type ListPage, type ListPlace,
} from "../db/list-place.ts";
import type { Payment, Refund } from "./payment.ts";
import { PAYMENT_COLUMNS, toPayment, type PaymentRow } from "./payments.ts";
import { REFUND_COLUMNS, toRefund, type RefundRow } from "./refunds.ts";

/**
 * Pages of the tenant's payments and refunds for the HTTP API's lists: the oldest first, by
 * creation time and then id (the index of migration 0038), after a place; filtered by status, a
 * payment (refunds) and a creation range [createdFrom, createdBefore).
 */
export interface PaymentPageQuery {
  after?: ListPlace | undefined;
  status?: "succeeded" | "declined" | undefined;
  createdFrom?: string | undefined;     // an instant, inclusive
  createdBefore?: string | undefined;   // an instant, exclusive
  limit: number;
}

const placeOf = (row: { place: string }, id: string): ListPlace => ({ position: row.place, id });

export async function paymentsPage(
  db: Queryable, tenantId: string, query: PaymentPageQuery,
): Promise<ListPage<Payment>> {
  const { rows } = await db.query<PaymentRow & { place: string }>(
    `SELECT ${PAYMENT_COLUMNS}, ${microsOfSql("p.created_at")} AS place
       FROM payment p
      WHERE p.tenant_id = $1
        AND ($2::text IS NULL OR (p.created_at, p.payment_id) > (${instantOfMicrosSql("$2")}, $3))
        AND ($4::text IS NULL OR p.status = $4)
        AND ($5::timestamptz IS NULL OR p.created_at >= $5)
        AND ($6::timestamptz IS NULL OR p.created_at < $6)
      ORDER BY p.created_at, p.payment_id
      LIMIT $7`,
    [tenantId, query.after?.position ?? null, query.after?.id ?? null, query.status ?? null,
      query.createdFrom ?? null, query.createdBefore ?? null, rowsToAsk(query.limit)]);
  return pageOf(rows, query.limit, toPayment, (row) => placeOf(row, row.payment_id));
}

export async function refundsPage(
  db: Queryable, tenantId: string, query: PaymentPageQuery & { paymentId?: string | undefined },
): Promise<ListPage<Refund>> {
  const { rows } = await db.query<RefundRow & { place: string }>(
    `SELECT ${REFUND_COLUMNS}, ${microsOfSql("r.created_at")} AS place
       FROM refund r
      WHERE r.tenant_id = $1
        AND ($2::text IS NULL OR (r.created_at, r.refund_id) > (${instantOfMicrosSql("$2")}, $3))
        AND ($4::text IS NULL OR r.status = $4)
        AND ($5::timestamptz IS NULL OR r.created_at >= $5)
        AND ($6::timestamptz IS NULL OR r.created_at < $6)
        AND ($7::text IS NULL OR r.payment_id = $7)
      ORDER BY r.created_at, r.refund_id
      LIMIT $8`,
    [tenantId, query.after?.position ?? null, query.after?.id ?? null, query.status ?? null,
      query.createdFrom ?? null, query.createdBefore ?? null, query.paymentId ?? null,
      rowsToAsk(query.limit)]);
  return pageOf(rows, query.limit, toRefund, (row) => placeOf(row, row.refund_id));
}

/** One refund by its id. */
export async function findRefundById(
  db: Queryable, tenantId: string, refundId: string,
): Promise<Refund | undefined> {
  const { rows } = await db.query<RefundRow>(
    `SELECT ${REFUND_COLUMNS} FROM refund WHERE tenant_id = $1 AND refund_id = $2`,
    [tenantId, refundId]);
  return rows[0] ? toRefund(rows[0]) : undefined;
}
