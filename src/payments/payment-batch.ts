import { assert } from "../assert.ts";
import type { Tx } from "../db/transaction.ts";
import {
  appliedTransferKeyOf, decideRecords, originalRefOf, type Outcome,
} from "../records/index.ts";
import { StatementParams } from "../db/statement-parts.ts";
import { enqueueEventsPart, type OutboxEvent } from "../outbox/outbox-store.ts";
import { lockIntents } from "./intent-lock.ts";
import { paymentView } from "./payment-view.ts";
import { intentId, paymentTransferKeyOf, type Payment } from "./payment.ts";
import {
  declinedPayment, invalidPaymentRefusal, isOtherChannel, paymentRecordOf, repeatRefusal, PAYMENT_COLUMNS, toPayment,
  type PaymentOutcome, type PaymentRequest, type PaymentRow,
} from "./payments.ts";

/** One first-time payment of a group-committed batch: the request and the Idempotency-Key it came with. */
export interface BatchPayment {
  request: PaymentRequest;
  idempotencyKey: string | undefined;   // undefined: a caller with no Idempotency-Key (the JetStream inbox)
}

/**
 * One payment intent, decided by the record core (src/records) like any record of any channel:
 * the canonical record `api:<client_reference>` claims its key and its payment identity, and posts
 * one balanced transfer (debit the debtor, credit the creditor) under `api:<client_reference>:debit`,
 * in the caller's transaction. The intent is protected for ever: a second request with the same
 * client_reference (any Idempotency-Key, any day) posts nothing. What stays here is the API's own
 * contract: the payment resource, and the refusal each decision is answered with. A batch of one
 * through `createPayments`, so a lone payment and a group-committed one are decided by the same code.
 */
export async function createPayment(tx: Tx, tenantId: string, request: PaymentRequest, scope: string, idempotencyKey?: string): Promise<PaymentOutcome> {
  const [outcome] = await createPayments(tx, tenantId, scope, [{ request, idempotencyKey }]);
  assert(outcome !== undefined, "a batch of one has one outcome");
  return outcome;
}

/**
 * `createPayment` for many intents of one tenant in the caller's transaction
 * (docs/decisions/0043): one statement for the intent locks, ONE record-core call for all the
 * records (arrival "request", so each is decided as a request is: the funds of each transfer in
 * batch order, under the debtors' row locks), one read of the payments the repeats name, one
 * statement for the payment rows and their outbox events. The outcome of each is the one
 * `createPayment` would give it alone. The batch holds each client_reference at most once (the
 * core would take two as twins of one key).
 */
export async function createPayments(tx: Tx, tenantId: string, scope: string, payments: readonly BatchPayment[]): Promise<PaymentOutcome[]> {
  const transactionAt = await lockIntents(tx, tenantId, payments.map((p) => p.request.clientReference));
  const decided = await decidePayments(tx, tenantId, scope, payments, transactionAt);
  if (decided.rows.length > 0) {
    const params = new StatementParams();
    await tx.query({ name: "clearline.payments.record", text: `WITH ${paymentWritesPart(params, tenantId, decided)} SELECT 1` }, params.values);
  }
  return decided.outcomes;
}

/** What a batch of payments decided, before its payment rows and events are written. */
export interface DecidedPayments {
  outcomes: PaymentOutcome[];
  rows: Payment[];          // to insert, as the resource will show them
  events: OutboxEvent[];    // payment.applied of each succeeded one
}

/**
 * The record core's decisions for a batch whose intents are locked (`lockIntents`, which gave
 * `transactionAt`), and each caller's outcome. Writes the ledger postings, the record keys and
 * their outcomes; the payment rows and their events are left to `paymentWritesPart`, so a caller
 * can send them in one statement with what it writes itself (the group-committed batch's
 * idempotency completions, then COMMIT; docs/decisions/0051).
 */
export async function decidePayments(tx: Tx, tenantId: string, scope: string, payments: readonly BatchPayment[], transactionAt: string): Promise<DecidedPayments> {
  assert(new Set(payments.map((p) => p.request.clientReference)).size === payments.length, "a payment batch holds each client_reference once");
  const items = payments.map((p) => paymentRecordOf(tenantId, p.request, scope, p.idempotencyKey));
  const decisions = await decideRecords(tx, { tenantId, arrival: { kind: "request", channel: "http", scope }, suspectWindowHours: 0 }, items);
  // The core answers its records in the order it was given them.
  const decided = payments.map(({ request }, index) => {
    const decision = decisions[index];
    const decidedAll = decision !== undefined && decisions.length === payments.length;
    assert(decidedAll, "the core decides every payment of the batch");
    return { request, outcome: decision.outcome };
  });
  const repeated = decided.filter((d) => needsExisting(d.outcome))
    .map((d) => d.request.clientReference);
  const existing = await findPaymentsByReference(tx, tenantId, repeated);
  const rows = decided.flatMap((d) => rowToInsert(d.request, d.outcome))
    .map((draft) => paymentOf(tenantId, draft, transactionAt));
  const inserted = new Map(rows.map((payment) => [payment.clientReference, payment]));
  // Told in the posting's transaction, under a key derived from the intent's transfer key.
  const events = rows.filter((row) => row.status === "succeeded")
    .map((payment) => ({
      tenantId, eventType: "payment.applied",
      eventKey: `${paymentTransferKeyOf(payment.clientReference, "debit")}:applied`,
      data: paymentView(payment),
    }));
  const outcomes = decided.map((d) => outcomeOf(d.request, d.outcome, inserted, existing));
  return { outcomes, rows, events };
}

/**
 * The payment rows and their outbox events as two data-modifying CTEs, `paid` and `told`, of a
 * larger statement (src/db/statement-parts.ts): "paid AS (...), told AS (...)". The rows carry
 * every column the resource shows but created_at, whose default now() is the `transactionAt`
 * they were built with.
 */
export function paymentWritesPart(params: StatementParams, tenantId: string, decided: DecidedPayments): string {
  const column = <T>(f: (p: Payment) => T) => decided.rows.map(f);
  const transferKeys = column((p) => (p.status === "succeeded"
    ? paymentTransferKeyOf(p.clientReference, "debit")
    : null));
  const paid = `INSERT INTO payment (tenant_id, payment_id, client_reference, status, decline_code, amount_minor, currency, debtor_account, creditor_account, description, transfer_key)
     SELECT ${params.add(tenantId)}, p.*
       FROM unnest(${params.add(column((p) => p.paymentId), "text[]")}, ${params.add(column((p) => p.clientReference), "text[]")},
                   ${params.add(column((p) => p.status), "text[]")}, ${params.add(column((p) => p.declineCode), "text[]")},
                   ${params.add(column((p) => p.amountMinor.toString()), "bigint[]")}, ${params.add(column((p) => p.currency), "text[]")},
                   ${params.add(column((p) => p.debtorAccount), "text[]")}, ${params.add(column((p) => p.creditorAccount), "text[]")},
                   ${params.add(column((p) => p.description), "text[]")},
                   ${params.add(transferKeys, "text[]")}) AS p
     RETURNING 1`;
  return `paid AS (${paid}), told AS (${enqueueEventsPart(params, decided.events)})`;
}

function needsExisting(outcome: Outcome): boolean {
  return outcome.kind !== "applied" && outcome.kind !== "rejected" && !isOtherChannel(outcome.code);
}

interface PaymentRowDraft {
  request: PaymentRequest;
  status: Payment["status"];
  declineCode: string | null;
}

function rowToInsert(request: PaymentRequest, outcome: Outcome): PaymentRowDraft[] {
  if (outcome.kind === "applied") {
    const transferKey = appliedTransferKeyOf(outcome);
    const intentKey = paymentTransferKeyOf(request.clientReference, "debit");
    const reference = request.clientReference;
    const why = `payment ${reference} posted under its intent's key, not ${transferKey}`;
    assert(transferKey === intentKey, why);
    return [{ request, status: "succeeded", declineCode: null }];
  }
  // A decision about money: the intent is declined for good, and a caller who lost the response finds it by client_reference.
  if (outcome.kind === "rejected" && outcome.code === "RECORD_INSUFFICIENT_FUNDS") {
    return [{ request, status: "declined", declineCode: "insufficient_funds" }];
  }
  return [];
}

/** The payment resource of a row to insert: what the insert will store, read back as PAYMENT_COLUMNS would read it. */
function paymentOf(tenantId: string, draft: PaymentRowDraft, transactionAt: string): Payment {
  const { request } = draft;
  return {
    paymentId: intentId("pay", tenantId, request.clientReference), clientReference: request.clientReference, status: draft.status,
    declineCode: draft.declineCode, amountMinor: request.amountMinor, currency: request.currency, debtorAccount: request.debtorAccount,
    creditorAccount: request.creditorAccount, description: request.description, refundedMinor: 0n, createdAt: transactionAt,
  };
}

function outcomeOf(
  request: PaymentRequest, outcome: Outcome, inserted: Map<string, Payment>,
  existing: Map<string, Payment>,
): PaymentOutcome {
  const payment = inserted.get(request.clientReference);
  if (outcome.kind === "applied") return { kind: "created", payment: payment as Payment };
  if (outcome.kind === "rejected") {
    if (payment) return declinedPayment(request, payment);
    const refusal = invalidPaymentRefusal(request, outcome.code, outcome.detail);
    return { kind: "refused", refusal };
  }
  const stored = existing.get(request.clientReference);
  const originalRef = originalRefOf(outcome);
  const refusal = repeatRefusal(request, outcome.code, originalRef, outcome.detail, stored);
  return { kind: "refused", refusal };
}

async function findPaymentsByReference(tx: Tx, tenantId: string, clientReferences: readonly string[]): Promise<Map<string, Payment>> {
  if (clientReferences.length === 0) return new Map();
  const { rows } = await tx.query<PaymentRow>(`SELECT ${PAYMENT_COLUMNS} FROM payment WHERE tenant_id = $1 AND client_reference = ANY($2::text[])`, [tenantId, clientReferences]);
  return new Map(rows.map((row) => [row.client_reference, toPayment(row)]));
}
