import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { WebhookSecretKeys } from "../../src/outbox/webhooks/secret-box.ts";
import { newSigningSecret } from "../../src/outbox/webhooks/signature.ts";

describe("webhook signing secrets sealed at rest", () => {
  const keys = new WebhookSecretKeys(randomBytes(32));
  const secret = newSigningSecret();

  it("opens what it sealed for the same row, and seals the same secret differently each time", () => {
    const sealed = keys.seal("ten_a", "ep_1", secret);
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(sealed).not.toContain(secret.slice(6, 22));
    expect(keys.open("ten_a", "ep_1", sealed)).toBe(secret);
    expect(keys.seal("ten_a", "ep_1", secret)).not.toBe(sealed);
  });

  it("does not open a sealed secret copied onto another endpoint's or tenant's row", () => {
    const sealed = keys.seal("ten_a", "ep_1", secret);
    expect(() => keys.open("ten_a", "ep_2", sealed)).toThrow(/does not open the stored secret of endpoint ep_2/);
    expect(() => keys.open("ten_b", "ep_1", sealed)).toThrow(/does not open/);
  });

  it("names the key file when another key sealed the secret", () => {
    const sealed = new WebhookSecretKeys(randomBytes(32)).seal("ten_a", "ep_1", secret);
    expect(() => keys.open("ten_a", "ep_1", sealed)).toThrow(/webhook-secret\.key .* the one it was sealed with/);
  });
});
