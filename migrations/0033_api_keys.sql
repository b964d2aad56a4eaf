-- API keys a tenant can name, scope, rotate and revoke (docs/decisions/0097-api-keys.md). An
-- expand (docs/decisions/0083): a new table, and tenant.api_key_hash loses NOT NULL so that a
-- tenant made by this release needs none; a process of the release before still authenticates
-- the keys it knows from it.
CREATE TABLE api_key (
  tenant_id     text        NOT NULL REFERENCES tenant (tenant_id),
  key_id        text        NOT NULL,
  name          text        NOT NULL,
  key_prefix    text,       -- the key's first characters, what lists show; NULL: made before 0033
  key_hash      text        NOT NULL,   -- sha256 of the key; the key itself is shown once
  scopes        text[]      NOT NULL
    CHECK (cardinality(scopes) >= 1
      AND scopes <@ ARRAY['read_only', 'payments', 'files', 'operations']::text[]),
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz,          -- the end of a rotation's overlap window
  revoked_at    timestamptz,
  replaced_by   text,                 -- the key_id a rotation made in this key's place
  last_used_at  timestamptz,          -- written at most once per key per interval, not per request
  PRIMARY KEY (tenant_id, key_id),
  UNIQUE (key_hash)
);

-- Every tenant's one key so far, kept working: all scopes, its prefix unknown (only a hash).
INSERT INTO api_key (tenant_id, key_id, name, key_hash, scopes, created_at)
SELECT tenant_id, 'key_' || substr(md5(tenant_id), 1, 20), 'default', api_key_hash,
       ARRAY['payments', 'files', 'operations']::text[], created_at
  FROM tenant
 WHERE api_key_hash IS NOT NULL
ON CONFLICT DO NOTHING;

ALTER TABLE tenant ALTER COLUMN api_key_hash DROP NOT NULL;
