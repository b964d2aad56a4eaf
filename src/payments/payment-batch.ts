import { assert } from "../assert.ts";
import type { Tx } from "../db/transaction.ts";
import type { Decision } from "../records/decision.ts";
import { decideRecords } from "../records/decide-records.ts";
import { enqueueEvents } from "../outbox/outbox-store.ts";
import { lockIntents } from "./intent-lock.ts";
import { intentId, transferKeyOf, type Payment } from "./payment.ts";
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
 * insert of the payment rows, one of the outbox events. The outcome of each is the one
 * `createPayment` would give it alone. The batch holds each client_reference at most once (the
 * core would take two as twins of one key).
 */
export async function createPayments(tx: Tx, tenantId: string, scope: string, payments: readonly BatchPayment[]): Promise<PaymentOutcome[]> {
  assert(new Set(payments.map((p) => p.request.clientReference)).size === payments.length, "a payment batch holds each client_reference once");
  await lockIntents(tx, tenantId, payments.map((p) => p.request.clientReference));
  const items = payments.map((p) => paymentRecordOf(tenantId, p.request, scope, p.idempotencyKey));
  const decisions = await decideRecords(tx, { tenantId, arrival: { kind: "request", channel: "http", scope }, suspectWindowHours: 0 }, items);
  assert(decisions.length === payments.length, "the core decides every payment of the batch");
  const existing = await findPaymentsByReference(tx, tenantId, payments.filter((_, i) => needsExisting(decisions[i] as Decision)).map((p) => p.request.clientReference));
  const rows = payments.flatMap((p, i) => rowToInsert(p.request, decisions[i] as Decision));
  const inserted = await insertPayments(tx, tenantId, rows);
  const applied = rows.filter((row) => row.status === "succeeded").map((row) => inserted.get(row.request.clientReference) as Payment);
  // Told in the posting's transaction, under a key derived from the intent's transfer key.
  await enqueueEvents(tx, applied.map((payment) => ({ tenantId, eventType: "payment.applied", eventKey: `${transferKeyOf(payment.clientReference, "debit")}:applied`, data: payment })));
  return payments.map((p, i) => outcomeOf(p.request, decisions[i] as Decision, inserted, existing));
}

function needsExisting(decision: Decision): boolean {
  return decision.outcome !== "applied" && decision.outcome !== "rejected" && !isOtherChannel(decision.code);
}

interface PaymentRowDraft {
  request: PaymentRequest;
  status: Payment["status"];
  declineCode: string | null;
  transferKey: string | null;
}

function rowToInsert(request: PaymentRequest, decision: Decision): PaymentRowDraft[] {
  if (decision.outcome === "applied") {
    assert(decision.transferKey === transferKeyOf(request.clientReference, "debit"), `payment ${request.clientReference} posted under its intent's key, not ${decision.transferKey}`);
    return [{ request, status: "succeeded", declineCode: null, transferKey: decision.transferKey }];
  }
  // A decision about money: the intent is declined for good, and a caller who lost the response finds it by client_reference.
  if (decision.outcome === "rejected" && decision.code === "INGEST_INSUFFICIENT_FUNDS") return [{ request, status: "declined", declineCode: "insufficient_funds", transferKey: null }];
  return [];
}

function outcomeOf(request: PaymentRequest, decision: Decision, inserted: Map<string, Payment>, existing: Map<string, Payment>): PaymentOutcome {
  assert(decision.outcome !== undefined, `payment ${request.clientReference} was decided`);
  const payment = inserted.get(request.clientReference);
  if (decision.outcome === "applied") return { kind: "created", payment: payment as Payment };
  if (decision.outcome === "rejected") {
    return payment ? declinedPayment(request, payment) : { kind: "refused", refusal: invalidPaymentRefusal(request, decision.code, decision.detail) };
  }
  return { kind: "refused", refusal: repeatRefusal(request, decision.code, decision.originalRef, decision.detail, existing.get(request.clientReference)) };
}

async function findPaymentsByReference(tx: Tx, tenantId: string, clientReferences: readonly string[]): Promise<Map<string, Payment>> {
  if (clientReferences.length === 0) return new Map();
  const { rows } = await tx.query<PaymentRow>(`SELECT ${PAYMENT_COLUMNS} FROM payment WHERE tenant_id = $1 AND client_reference = ANY($2::text[])`, [tenantId, clientReferences]);
  return new Map(rows.map((row) => [row.client_reference, toPayment(row)]));
}

async function insertPayments(tx: Tx, tenantId: string, drafts: readonly PaymentRowDraft[]): Promise<Map<string, Payment>> {
  if (drafts.length === 0) return new Map();
  const column = <T>(f: (d: PaymentRowDraft) => T) => drafts.map(f);
  const { rows } = await tx.query<PaymentRow>(
    {
      name: "clearline.payments.insert-batch",
      text: `INSERT INTO payment (tenant_id, payment_id, client_reference, status, decline_code, amount_minor, currency, debtor_account, creditor_account, description, transfer_key)
             SELECT $1, p.* FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[]) AS p
             RETURNING ${PAYMENT_COLUMNS}`,
    },
    [tenantId, column((d) => intentId("pay", tenantId, d.request.clientReference)), column((d) => d.request.clientReference), column((d) => d.status),
      column((d) => d.declineCode), column((d) => d.request.amountMinor.toString()), column((d) => d.request.currency), column((d) => d.request.debtorAccount),
      column((d) => d.request.creditorAccount), column((d) => d.request.description), column((d) => d.transferKey)],
  );
  assert(rows.length === drafts.length, "the insert returns every payment of the batch");
  return new Map(rows.map((row) => [row.client_reference, toPayment(row)]));
}
