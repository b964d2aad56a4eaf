-- Their references kept as indexed rows, so that a reconciliation run matches by a join of rows
-- it reads as they are stored, without unnesting and untagging every item's references on every
-- run (docs/decisions/0036-set-based-reconciliation-run.md).

-- One row per reference value an item may be matched on (untagged: "e2e:INV-1" is "INV-1"; never
-- their own entry ids svcr/ntry), for the items rules may match (booked, not a duplicate); every
-- other item, and an item without such a reference, has one row with ref ''. So every item has at
-- least one row, and the row carries what a run tests and digests (date, signed amount, currency,
-- status, its hash for the run's identity): a run reads this table alone for their side. Derived from recon_external_item by the
-- triggers below, never written by code, so no path can store an item a run would not see.
CREATE TABLE recon_item_ref (
  tenant_id      text    NOT NULL,
  account_id     text    NOT NULL,
  item_key       text    NOT NULL,
  ref            text    NOT NULL,   -- '' for an item with no reference rules may match on
  booking_date   date    NOT NULL,
  signed_minor   bigint  NOT NULL,   -- credits (money into our account) positive
  currency       char(3) NOT NULL,
  status         text    NOT NULL,
  -- The item's share of a run's identity (src/recon/set-matching.ts): a 64-bit hash of its key,
  -- signed amount, status and booking date (hashtextextended, the function hash partitioning of
  -- text relies on, so stable across versions), computed once here, not on every run.
  item_hash      bigint  NOT NULL,
  PRIMARY KEY (tenant_id, account_id, item_key, ref)
);
-- A run reads one account's rows over its dates.
CREATE INDEX recon_item_ref_date ON recon_item_ref (tenant_id, account_id, booking_date);

-- The reference values of one item that rules may match on; {''} when there are none.
CREATE FUNCTION recon_match_refs(refs text[], status text, duplicate_of text) RETURNS SETOF text
LANGUAGE sql IMMUTABLE AS $$
  SELECT DISTINCT substr(x, strpos(x, ':') + 1)
    FROM unnest(refs) AS x
   WHERE status = 'booked' AND duplicate_of IS NULL
     AND (CASE WHEN strpos(x, ':') = 0 THEN '' ELSE split_part(x, ':', 1) END) NOT IN ('svcr', 'ntry')
     AND length(substr(x, strpos(x, ':') + 1)) > 0
  UNION ALL
  SELECT '' WHERE NOT (status = 'booked' AND duplicate_of IS NULL AND EXISTS (
    SELECT 1 FROM unnest(refs) AS x
     WHERE (CASE WHEN strpos(x, ':') = 0 THEN '' ELSE split_part(x, ':', 1) END) NOT IN ('svcr', 'ntry')
       AND length(substr(x, strpos(x, ':') + 1)) > 0))
$$;

CREATE FUNCTION recon_item_hash(item_key text, signed_minor bigint, status text, booking_date date) RETURNS bigint
LANGUAGE sql STABLE AS $$
  SELECT hashtextextended(item_key || '=' || signed_minor || ':' || CASE status WHEN 'pending' THEN 'p' ELSE 'b' END
                          || ':' || to_char(booking_date, 'YYYY-MM-DD'), 0)
$$;

CREATE FUNCTION recon_item_ref_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO recon_item_ref (tenant_id, account_id, item_key, ref, booking_date, signed_minor, currency, status, item_hash)
  SELECT n.tenant_id, n.account_id, n.item_key, r.ref, n.booking_date,
         CASE n.direction WHEN 'C' THEN n.amount_minor ELSE -n.amount_minor END, n.currency, n.status,
         recon_item_hash(n.item_key, CASE n.direction WHEN 'C' THEN n.amount_minor ELSE -n.amount_minor END, n.status, n.booking_date)
    FROM new_items n CROSS JOIN LATERAL recon_match_refs(n.refs, n.status, n.duplicate_of) AS r(ref);
  RETURN NULL;
END $$;

-- An update (a pending entry later booked: status and booking date) derives the item's rows again.
CREATE FUNCTION recon_item_ref_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM recon_item_ref r USING old_items o
   WHERE r.tenant_id = o.tenant_id AND r.account_id = o.account_id AND r.item_key = o.item_key;
  INSERT INTO recon_item_ref (tenant_id, account_id, item_key, ref, booking_date, signed_minor, currency, status, item_hash)
  SELECT n.tenant_id, n.account_id, n.item_key, r.ref, n.booking_date,
         CASE n.direction WHEN 'C' THEN n.amount_minor ELSE -n.amount_minor END, n.currency, n.status,
         recon_item_hash(n.item_key, CASE n.direction WHEN 'C' THEN n.amount_minor ELSE -n.amount_minor END, n.status, n.booking_date)
    FROM new_items n CROSS JOIN LATERAL recon_match_refs(n.refs, n.status, n.duplicate_of) AS r(ref);
  RETURN NULL;
END $$;

CREATE FUNCTION recon_item_ref_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM recon_item_ref r USING old_items o
   WHERE r.tenant_id = o.tenant_id AND r.account_id = o.account_id AND r.item_key = o.item_key;
  RETURN NULL;
END $$;

CREATE TRIGGER recon_external_item_refs_insert AFTER INSERT ON recon_external_item
  REFERENCING NEW TABLE AS new_items FOR EACH STATEMENT EXECUTE FUNCTION recon_item_ref_insert();
CREATE TRIGGER recon_external_item_refs_update AFTER UPDATE ON recon_external_item
  REFERENCING OLD TABLE AS old_items NEW TABLE AS new_items FOR EACH STATEMENT EXECUTE FUNCTION recon_item_ref_update();
CREATE TRIGGER recon_external_item_refs_delete AFTER DELETE ON recon_external_item
  REFERENCING OLD TABLE AS old_items FOR EACH STATEMENT EXECUTE FUNCTION recon_item_ref_delete();

-- Items imported before this migration.
INSERT INTO recon_item_ref (tenant_id, account_id, item_key, ref, booking_date, signed_minor, currency, status, item_hash)
SELECT i.tenant_id, i.account_id, i.item_key, r.ref, i.booking_date,
       CASE i.direction WHEN 'C' THEN i.amount_minor ELSE -i.amount_minor END, i.currency, i.status,
         recon_item_hash(i.item_key, CASE i.direction WHEN 'C' THEN i.amount_minor ELSE -i.amount_minor END, i.status, i.booking_date)
  FROM recon_external_item i CROSS JOIN LATERAL recon_match_refs(i.refs, i.status, i.duplicate_of) AS r(ref);

-- Reconciliation corrections are left out of a run's side of ours: this finds the few there are
-- without reading every transfer of the tenant (the predicate costs a posting nothing else).
CREATE INDEX transfer_recon_correction ON transfer (tenant_id, transfer_key) WHERE kind = 'recon_correction';
