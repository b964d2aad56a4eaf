import { sentTogether } from "../../src/db/pipeline.ts";
import { commitAfter, type Tx } from "../../src/db/transaction.ts";
import { entryKeyOf } from "../../src/ledger/transfer.ts";

/**
 * The baseline of the API benchmark: the raw minimum, written by hand, of the database work of a
 * first-time POST /v1/payments with an Idempotency-Key. The same rows the service writes (the
 * idempotency record, claimed then completed; the dedup mark and the payment identity; one
 * transfer and its two entries, whose balance delta rows the database adds; the payment), with
 * the funds check (the debtor's row locked, then its balance read in a later statement, whose
 * snapshot follows the lock). Four statements inside BEGIN/COMMIT, in two round trips on the
 * pipelining pool, as the service may send them (docs/decisions/0051): BEGIN, the claim-and-lock
 * and the balance read together (the read still starts after the lock is granted), then the
 * insert of everything together with COMMIT. Keys, ids, fingerprints and the response body are
 * computed before the clock starts.
 */
export interface RawPayment {
  tenantId: string;
  endpoint: string;
  idempotencyKey: string;
  requestDigest: string;
  requestCanonical: string;
  clientReference: string;
  paymentId: string;
  fingerprint: string;
  amountMinor: bigint;
  currency: string;
  debtorAccount: string;
  creditorAccount: string;
  valueDate: string;
  responseBody: string;
  leaseMs: number;
  windowMs: number;
}

/** Claims the idempotency key and locks the debtor in one statement; the debtor's balance read is sent right behind it. */
async function claimAndLock(tx: Tx, p: RawPayment): Promise<bigint> {
  const [claimed, { rows }] = await sentTogether(tx, () => tx.query(
    `WITH c AS (
       INSERT INTO idempotency_record (tenant_id, endpoint, idem_key, request_digest, request_canonical, state, lease_until, expires_at)
       VALUES ($1, $2, $3, $4, $5, 'in_progress', now() + make_interval(secs => $7 / 1000.0), now() + make_interval(secs => $8 / 1000.0))
       RETURNING attempt)
     SELECT a.account_id FROM account a, c WHERE a.tenant_id = $1 AND a.account_id = $6 FOR UPDATE OF a`,
    [p.tenantId, p.endpoint, p.idempotencyKey, p.requestDigest, p.requestCanonical, p.debtorAccount, p.leaseMs, p.windowMs],
  ), () => tx.query<{ balance: string }>(
    `SELECT (coalesce((SELECT credits_minor - debits_minor FROM account_balance WHERE tenant_id = $1 AND account_id = $2), 0)
           + coalesce((SELECT sum(credits_minor - debits_minor) FROM balance_delta WHERE tenant_id = $1 AND account_id = $2), 0))::text AS balance`,
    [p.tenantId, p.debtorAccount],
  ));
  if (claimed.rowCount !== 1) throw new Error("bench debtor exists and its key is new");
  return BigInt(rows[0]?.balance ?? "0");
}

export async function rawPayment(tx: Tx, p: RawPayment): Promise<void> {
  const balanceMinor = await claimAndLock(tx, p);
  if (balanceMinor < p.amountMinor) throw new Error("bench debtors are funded for the whole run");
  const naturalKey = `api:${p.clientReference}`;
  const transferKey = `${naturalKey}:debit`;
  await commitAfter(tx, () => tx.query(
    `WITH k AS (
       INSERT INTO record_key (tenant_id, natural_key, fingerprint, channel, kind, state, position,
         amount_minor, currency, value_date, transfer_key, identity_key)
       VALUES ($1, $2, $4, 'http', 'payment', 'applied', $5, $6, $7, $8, $3, $9)
     ), i AS (
       INSERT INTO record_identity (tenant_id, identity_key, natural_key, channel, fingerprint,
                                    transfer_key)
       VALUES ($1, $9, $2, 'http', $4, $3)
     ), t AS (
       INSERT INTO transfer (tenant_id, transfer_key, kind, value_date, source_ref) VALUES ($1, $3, 'payment', $8, $10)
     ), e AS (
       INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
       VALUES ($1, $18, $3, $11, 'D', $6, $7, $8), ($1, $19, $3, $12, 'C', $6, $7, $8)
     ), pay AS (
       INSERT INTO payment (tenant_id, payment_id, client_reference, status, amount_minor, currency, debtor_account, creditor_account, transfer_key)
       VALUES ($1, $13, $14, 'succeeded', $6, $7, $11, $12, $3)
     )
     UPDATE idempotency_record SET state = 'completed', response_status = 201, response_body = $15, effect_ref = $13, completed_at = now(), lease_until = now()
      WHERE tenant_id = $1 AND endpoint = $16 AND idem_key = $17`,
    [p.tenantId, naturalKey, transferKey, p.fingerprint, `POST /v1/payments Idempotency-Key ${p.idempotencyKey}`, p.amountMinor.toString(), p.currency,
      p.valueDate, `e2e:${p.clientReference}`, `http:${p.paymentId}`, p.debtorAccount, p.creditorAccount, p.paymentId, p.clientReference,
      p.responseBody, p.endpoint, p.idempotencyKey, entryKeyOf(transferKey, 0), entryKeyOf(transferKey, 1)],
  ));
}
