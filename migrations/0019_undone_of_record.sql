-- Undos of a named original through the record core (docs/decisions/0038): an HTTP refund undoes
-- part of the payment it names. What the undos took off a record is kept on the record's own dedup
-- mark; the row lock on that mark serialises the undos of one record, and the CHECK keeps their sum
-- at most its amount whatever happens upstream.
ALTER TABLE ingest_record_key ADD COLUMN undone_minor bigint NOT NULL DEFAULT 0
  CONSTRAINT ingest_record_key_undone_check CHECK (undone_minor >= 0 AND undone_minor <= amount_minor);

-- The fingerprint src/normalize/fingerprint.ts computes: sha256 over the fields in name order,
-- each as name, NUL, value, 0x01 (values here hold no spaces to fold).
CREATE FUNCTION pg_temp.fingerprint_of(names text[], vals text[]) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT encode(sha256(coalesce(string_agg(convert_to(n, 'UTF8') || '\x00'::bytea || convert_to(trim(v), 'UTF8') || '\x01'::bytea, ''::bytea ORDER BY n), ''::bytea)), 'hex')
    FROM unnest(names, vals) AS f(n, v)
$$;

-- HTTP payments from before the record core have no dedup mark: a refund finds its original by
-- that mark, so each gets the mark the core would have written (key api:<client_reference>,
-- applied with its transfer, or rejected when it was declined), with what its refunds undid.
INSERT INTO ingest_record_key (tenant_id, natural_key, fingerprint, channel, kind, state, position, amount_minor, currency, value_date,
                               transfer_key, undone_minor, created_at)
SELECT p.tenant_id, 'api:' || p.client_reference,
       pg_temp.fingerprint_of(ARRAY['amount', 'creditor', 'currency', 'debtor'], ARRAY[p.amount_minor::text, p.creditor_account, p.currency, p.debtor_account]),
       'api', 'payment', CASE WHEN p.status = 'succeeded' THEN 'applied' ELSE 'rejected' END,
       'POST /v1/payments (before the record core)', p.amount_minor, p.currency, (p.created_at AT TIME ZONE 'UTC')::date,
       p.transfer_key, p.refunded_minor, p.created_at
  FROM payment p
ON CONFLICT (tenant_id, natural_key) DO UPDATE SET undone_minor = EXCLUDED.undone_minor
  WHERE ingest_record_key.channel = 'api' AND ingest_record_key.kind = 'payment';

-- Refunds from before this change get the mark the core now writes (key api-refund:<client_reference>),
-- so a repeat of one is a duplicate, never a second refund.
INSERT INTO ingest_record_key (tenant_id, natural_key, fingerprint, channel, kind, state, position, amount_minor, currency, value_date,
                               transfer_key, original_ref, matched_key, created_at)
SELECT r.tenant_id, 'api-refund:' || r.client_reference,
       pg_temp.fingerprint_of(ARRAY['amount', 'currency', 'original'], ARRAY[r.amount_minor::text, r.currency, 'api:' || p.client_reference]),
       'api', 'refund', CASE WHEN r.status = 'succeeded' THEN 'applied' ELSE 'rejected' END,
       'POST /v1/refunds (before the record core)', r.amount_minor, r.currency, (r.created_at AT TIME ZONE 'UTC')::date,
       r.transfer_key, 'api:' || p.client_reference, CASE WHEN r.status = 'succeeded' THEN 'api:' || p.client_reference END, r.created_at
  FROM refund r JOIN payment p ON p.tenant_id = r.tenant_id AND p.payment_id = r.payment_id
ON CONFLICT (tenant_id, natural_key) DO NOTHING;
