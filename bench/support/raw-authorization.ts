import { gatewayAccounts } from "../../src/normalize/from-iso8583.ts";
import { sentTogether } from "../../src/db/pipeline.ts";
import { commitAfter, type Tx } from "../../src/db/transaction.ts";
import type { FieldValue } from "../../src/protocols/iso8583/index.ts";
import { entryKeyOf } from "../../src/ledger/transfer.ts";

/**
 * The baseline of the ISO 8583 endpoint benchmark: the raw minimum, written by hand, of the
 * database work that an approved 0100 purchase makes: the same rows the issuer's handler writes
 * (one iso8583_inbound row, one card_hold transfer, its two entries debiting the customer and
 * crediting the holds account), with the funds check (the customer's account row locked, its
 * balance read). Four statements inside BEGIN/COMMIT, in two round trips on the pipelining pool,
 * as the service may send them (docs/decisions/0051): BEGIN, the lock and the balance read
 * together (the read still starts after the lock is granted), then both inserts with COMMIT.
 * Everything that is not SQL (natural key, fingerprint, response fields) is computed before the
 * clock starts.
 */
export interface RawAuthorization {
  tenantId: string;
  cardHash: string;
  naturalKey: string;
  rrn: string;
  mti: string;
  fingerprint: string;
  amountMinor: bigint;
  currency: string;
  responseMti: string;
  responseFields: Record<string, FieldValue>;
  valueDate: string;
  connection: string;
}

/** Lock the card's account and read its balance in the order the funds check needs: the read is sent right behind the lock. */
async function lockedBalance(tx: Tx, a: RawAuthorization): Promise<{ accountId: string; balanceMinor: bigint }> {
  const [locked, { rows }] = await sentTogether(tx, () => tx.query<{ account_id: string }>(
    // Each row found by its primary key, as a hand-written lookup would be (docs/decisions/0052).
    `SELECT a.account_id FROM card c
      CROSS JOIN LATERAL (SELECT account_id FROM account WHERE tenant_id = $1 AND account_id = c.account_id FOR UPDATE) a
      WHERE c.tenant_id = $1 AND c.card_hash = $2`,
    [a.tenantId, a.cardHash],
  ), () => tx.query<{ balance: string }>(
    `SELECT (coalesce((SELECT credits_minor - debits_minor FROM account_balance WHERE tenant_id = $1 AND account_id = c.account_id), 0)
           + coalesce((SELECT sum(credits_minor - debits_minor) FROM balance_delta WHERE tenant_id = $1 AND account_id = c.account_id), 0))::text AS balance
       FROM card c WHERE c.tenant_id = $1 AND c.card_hash = $2`,
    [a.tenantId, a.cardHash],
  ));
  const accountId = locked.rows[0]?.account_id;
  if (accountId === undefined) throw new Error("bench card has an account");
  return { accountId, balanceMinor: BigInt(rows[0]?.balance ?? "0") };
}

export async function rawAuthorization(tx: Tx, a: RawAuthorization): Promise<void> {
  const { accountId, balanceMinor } = await lockedBalance(tx, a);
  if (balanceMinor < a.amountMinor) throw new Error("bench customers are funded for the whole run");
  const transferKey = `${a.naturalKey}:hold`;
  await commitAfter(tx, async () => (await sentTogether(tx, () => tx.query(
    "INSERT INTO transfer (tenant_id, transfer_key, kind, value_date, source_ref) VALUES ($1, $2, 'card_hold', $3, $4)",
    [a.tenantId, transferKey, a.valueDate, `iso8583:${a.mti}:${a.naturalKey}`],
  ), () => tx.query(
    `WITH entries AS (
       INSERT INTO ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
       VALUES ($1, $3, $2, $4, 'D', $6, $7, $8), ($1, $5, $2, $9, 'C', $6, $7, $8))
     INSERT INTO iso8583_inbound (tenant_id, natural_key, mti_class, retrieval_reference_number, mti, fingerprint, card_hash, account_id,
       amount_minor, currency, outcome, response_code, response_mti, response_fields, effect_key, connection)
     VALUES ($1, $10, '010', $11, $12, $13, $14, $4, $6, $7, 'held', '00', $15, $16, $2, $17)`,
    [a.tenantId, transferKey, entryKeyOf(transferKey, 0), accountId, entryKeyOf(transferKey, 1), a.amountMinor.toString(), a.currency, a.valueDate,
      gatewayAccounts.holds(a.currency), a.naturalKey, a.rrn, a.mti, a.fingerprint, a.cardHash, a.responseMti, JSON.stringify(a.responseFields), a.connection],
  )))[1]);
}
