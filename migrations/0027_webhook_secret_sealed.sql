-- Webhook signing secrets at rest (docs/decisions/0065): sealed with a key of the service that
-- the database does not hold (AES-256-GCM, `v1.<nonce>.<ciphertext>.<tag>`). SQL cannot seal (the
-- key is not here), so the secrets stored in clear before this are sealed by the first
-- `clearline migrate` or `clearline serve` after it, which clears signing_secret row by row; a
-- row holds one of the two, never neither.
ALTER TABLE webhook_endpoint ADD COLUMN signing_secret_sealed text CHECK (signing_secret_sealed LIKE 'v1.%');
ALTER TABLE webhook_endpoint ALTER COLUMN signing_secret DROP NOT NULL;
ALTER TABLE webhook_endpoint ADD CONSTRAINT webhook_endpoint_secret_present
  CHECK (signing_secret IS NOT NULL OR signing_secret_sealed IS NOT NULL);
