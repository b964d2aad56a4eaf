import { withTransaction, type Tx } from "../src/db/transaction.ts";
import { openAccount } from "../src/ledger/accounts.ts";
import { advanceProjection } from "../src/ledger/balance.ts";
import { postTransfer } from "../src/ledger/post-transfers.ts";
import { lockIntent } from "../src/payments/intent-lock.ts";
import { intentId, paymentTransferKeyOf } from "../src/payments/payment.ts";
import { createPayment } from "../src/payments/payment-batch.ts";
import { createRefund } from "../src/payments/refunds.ts";
import { createTenant } from "../src/tenants/tenants.ts";
import { alternate, roundsRow, throughput, type BenchReport } from "./harness.ts";
import { benchDatabase } from "./support/database.ts";

const ROUNDS = 5;
const REFUNDS_PER_ROUND = 400;
const CONCURRENCY = 8;
const PAYMENTS = 64;   // refunds spread over many payments (and merchants), so one payment's lock does not serialize the run

/**
 * A refund's transaction decided by the record core (createRefund: claim, the payment's mark locked,
 * the mirrored legs posted, the refund row) against the same work written by hand, the path refunds
 * took before the core: intent lock, refund lookup, payment row FOR UPDATE, posting, two writes.
 * Alternated round by round (docs/decisions/0038).
 */
export async function run(): Promise<BenchReport> {
  const db = await benchDatabase(CONCURRENCY + 4);
  try {
    const tenant = await createTenant(db.pool, "bench-refund");
    if (!tenant.ok) throw new Error(tenant.error.message);
    const tenantId = tenant.value.tenantId;
    const payments = await givenPayments(tenantId, db.pool);
    const side = (label: string, refundOne: (tx: Tx, reference: string, payment: (typeof payments)[number]) => Promise<void>) => async (round: number) => {
      await advanceProjection(db.pool, tenantId);
      const { opsPerSecond } = await throughput(REFUNDS_PER_ROUND, CONCURRENCY, async (i) => {
        await withTransaction(db.pool, (tx) => refundOne(tx, `${label}-${round}-${i}`, payments[i % PAYMENTS] as (typeof payments)[number]));
      });
      return opsPerSecond;
    };
    const rounds = await alternate(ROUNDS,
      side("hand", (tx, reference, payment) => refundByHand(tx, tenantId, reference, payment)),
      side("core", async (tx, reference, payment) => {
        const outcome = await createRefund(tx, tenantId, { clientReference: reference, payment: { paymentId: payment.paymentId }, amountText: "0.01", currency: null }, "POST /v1/refunds");
        if (outcome.kind !== "created") throw new Error(`refund ${reference} refused: ${outcome.refusal.code}`);
      }));
    return {
      name: "refund",
      rows: [roundsRow(`refund through the record core, ${CONCURRENCY} callers`, "refunds/s", "the pre-core refund transaction by hand", rounds, ">= 0.8")],
      notes: [`${REFUNDS_PER_ROUND} refunds of 0.01 per side and round over ${PAYMENTS} payments; ${process.env.DATABASE_URL ? "DATABASE_URL server" : "embedded PostgreSQL"}; 2 cores shared with PostgreSQL`],
    };
  } finally {
    await db.close();
  }
}

async function givenPayments(tenantId: string, pool: Parameters<typeof withTransaction>[0]): Promise<Array<{ paymentId: string; debtor: string; creditor: string }>> {
  return withTransaction(pool, async (tx) => {
    await openAccount(tx, { tenantId, accountId: "settlement", kind: "settlement", currency: "USD" });
    const made = [];
    for (let i = 0; i < PAYMENTS; i++) {
      const [debtor, creditor] = [`payer-${i}`, `merchant-${i}`];
      await openAccount(tx, { tenantId, accountId: debtor, kind: "customer", currency: "USD" });
      await openAccount(tx, { tenantId, accountId: creditor, kind: "customer", currency: "USD" });
      await postTransfer(tx, { tenantId, transferKey: `fund-${i}`, kind: "funding", valueDate: "2026-12-03", legs: [
        { accountId: "settlement", direction: "D", amountMinor: 10n ** 9n, currency: "USD" }, { accountId: debtor, direction: "C", amountMinor: 10n ** 9n, currency: "USD" },
      ] });
      const paid = await createPayment(tx, tenantId, { clientReference: `pay-${i}`, amountMinor: 10n ** 9n, currency: "USD", debtorAccount: debtor, creditorAccount: creditor, description: null }, "bench");
      if (paid.kind !== "created") throw new Error(`payment ${i} refused`);
      made.push({ paymentId: paid.payment.paymentId, debtor, creditor });
    }
    return made;
  });
}

/** The pre-core refund of 0.01, written by hand: what the core's path is measured against. */
async function refundByHand(tx: Tx, tenantId: string, reference: string, payment: { paymentId: string; debtor: string; creditor: string }): Promise<void> {
  await lockIntent(tx, tenantId, reference);
  const existing = await tx.query("SELECT 1 FROM refund WHERE tenant_id = $1 AND client_reference = $2", [tenantId, reference]);
  if (existing.rows.length > 0) throw new Error(`refund ${reference} exists`);
  const { rows } = await tx.query<{ amount_minor: string; refunded_minor: string }>("SELECT amount_minor, refunded_minor FROM payment WHERE tenant_id = $1 AND payment_id = $2 FOR UPDATE", [tenantId, payment.paymentId]);
  if (!rows[0] || BigInt(rows[0].amount_minor) - BigInt(rows[0].refunded_minor) < 1n) throw new Error(`payment ${payment.paymentId} has nothing left`);
  const transferKey = paymentTransferKeyOf(reference, "refund");
  const posted = await postTransfer(tx, { tenantId, transferKey, kind: "refund", valueDate: new Date().toISOString().slice(0, 10), sourceRef: `http:${payment.paymentId}`, legs: [
    { accountId: payment.creditor, direction: "D", amountMinor: 1n, currency: "USD" }, { accountId: payment.debtor, direction: "C", amountMinor: 1n, currency: "USD" },
  ] });
  if (!posted.ok) throw new Error(`refund ${reference}: ${posted.error.code}`);
  await tx.query("UPDATE payment SET refunded_minor = refunded_minor + 1 WHERE tenant_id = $1 AND payment_id = $2", [tenantId, payment.paymentId]);
  await tx.query(
    `INSERT INTO refund (tenant_id, refund_id, client_reference, payment_id, status, amount_minor, currency, transfer_key) VALUES ($1, $2, $3, $4, 'succeeded', 1, 'USD', $5)`,
    [tenantId, intentId("ref", tenantId, reference), reference, payment.paymentId, transferKey],
  );
}
