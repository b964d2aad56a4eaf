-- Migration 0018 spelled out the derivation of an item's reference rows three times: in the insert
-- trigger, in the update trigger and in its backfill. One function now derives them, and both
-- triggers call it, so a change to what a run matches on is made in one place. The rows derived
-- are the same (a test compares the triggers' rows before and after): the item's reference values
-- rules may match on (recon_match_refs), its signed amount, and its share of a run's identity
-- (recon_item_hash).

-- The reference rows of one item, in recon_item_ref's column order. LANGUAGE sql and STABLE, one
-- SELECT: the planner inlines it into the triggers' statements, so it costs no call per row.
CREATE FUNCTION recon_item_ref_rows(n recon_external_item) RETURNS SETOF recon_item_ref
LANGUAGE sql STABLE AS $$
  SELECT n.tenant_id, n.account_id, n.item_key, r.ref, n.booking_date, s.signed_minor, n.currency, n.status,
         recon_item_hash(n.item_key, s.signed_minor, n.status, n.booking_date)
    FROM (SELECT CASE n.direction WHEN 'C' THEN n.amount_minor ELSE -n.amount_minor END AS signed_minor) AS s
   CROSS JOIN LATERAL recon_match_refs(n.refs, n.status, n.duplicate_of) AS r(ref)
$$;

CREATE OR REPLACE FUNCTION recon_item_ref_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO recon_item_ref SELECT d.* FROM new_items n CROSS JOIN LATERAL recon_item_ref_rows(n) AS d;
  RETURN NULL;
END $$;

-- An update (a pending entry later booked: status and booking date) derives the item's rows again.
CREATE OR REPLACE FUNCTION recon_item_ref_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM recon_item_ref r USING old_items o
   WHERE r.tenant_id = o.tenant_id AND r.account_id = o.account_id AND r.item_key = o.item_key;
  INSERT INTO recon_item_ref SELECT d.* FROM new_items n CROSS JOIN LATERAL recon_item_ref_rows(n) AS d;
  RETURN NULL;
END $$;
