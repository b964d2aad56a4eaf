-- ISO 8583 reversals are decided by the record core (docs/decisions/0039). The core matches a
-- reversal with its original by the original's dedup mark, and reverses an original at most once
-- by the reversal marks linked to it. Card messages answered before the core decided them have a
-- stored answer and no mark: without one, a reversal of such an original would be an orphan (its
-- hold never released), and a second reversal of an original reversed before would not see the
-- first. So each gets the mark the core would have written, from its stored answer.

-- Originals that were answered with an effect or a decision (not the 05 after a reversal, and not
-- input declines other than for funds: those claim no key, decision 0037).
INSERT INTO ingest_record_key (tenant_id, natural_key, fingerprint, channel, kind, state, file_id, record_index, position,
                               amount_minor, currency, value_date, transfer_key, created_at)
SELECT i.tenant_id, i.natural_key, i.fingerprint, 'iso8583',
       CASE WHEN i.outcome = 'approved' THEN 'approval'
            WHEN i.outcome = 'answered' THEN 'balance_inquiry'
            WHEN i.mti_class = '010' THEN 'authorization'
            WHEN i.mti_class = '012' THEN 'authorization_advice'
            WHEN i.mti_class = '020' THEN 'financial'
            ELSE 'financial_advice' END,
       CASE WHEN i.outcome = 'declined' THEN 'rejected' ELSE 'applied' END,
       NULL, NULL, 'mti=' || i.mti || ' (answered before the record core, migration 0020)',
       i.amount_minor, i.currency, i.created_at::date, i.effect_key, i.created_at
  FROM iso8583_inbound i
 WHERE i.currency IS NOT NULL
   AND (i.outcome IN ('held', 'posted', 'posted_to_suspense', 'approved', 'answered') OR (i.outcome = 'declined' AND i.response_code = '51'))
ON CONFLICT (tenant_id, natural_key) DO NOTHING;

-- Reversals answered before this migration: linked to their original (matched_key) with what they
-- undid, or waiting for it (orphan). Currency: the original's; an orphan's is unknown ('XXX').
INSERT INTO ingest_record_key (tenant_id, natural_key, fingerprint, channel, kind, state, file_id, record_index, position,
                               amount_minor, currency, value_date, transfer_key, original_ref, matched_key, created_at)
SELECT r.tenant_id, r.natural_key, r.fingerprint, 'iso8583', 'reversal',
       CASE WHEN r.outcome = 'orphan' THEN 'orphan' ELSE 'applied' END,
       NULL, NULL, 'mti=' || r.mti || ' (answered before the record core, migration 0020)',
       CASE WHEN r.outcome = 'orphan' THEN 0
            ELSE COALESCE(r.undone_minor, CASE WHEN r.effect_key IS NULL THEN 0 ELSE r.amount_minor END) END,
       COALESCE(o.currency, 'XXX'), r.created_at::date, r.effect_key, r.original_key,
       CASE WHEN r.outcome = 'orphan' THEN NULL ELSE r.original_key END, r.created_at
  FROM iso8583_inbound_reversal r
  LEFT JOIN iso8583_inbound o ON o.tenant_id = r.tenant_id AND o.natural_key = r.original_key
ON CONFLICT (tenant_id, natural_key) DO NOTHING;
