import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { assert } from "../../assert.ts";
import { readOrCreateKeyFile } from "../../config/key-file.ts";

/**
 * Webhook signing secrets at rest (docs/decisions/0065). A secret must be read back in clear to
 * sign every delivery (an HMAC key), so it cannot be hashed: it is sealed with AES-256-GCM under a
 * key of the service that the database does not hold, from configuration
 * (CLEARLINE_WEBHOOK_SECRET_KEY) or generated once into CLEARLINE_HOME/webhook-secret.key (0600),
 * as the card hash key is (0020). One key per tenant is derived from it with HKDF; each secret has
 * a random 96-bit nonce, and its tenant and endpoint as associated data, so a sealed value copied
 * onto another row does not open. A stolen database without the key file yields no secret.
 */
export const webhookKeyFileName = "webhook-secret.key";
const masterSecretBytesMin = 32;
const derivationSalt = "clearline webhook signing secret v1";
// v1.<nonce>.<ciphertext>.<tag>, each base64url: the version names the algorithm and derivation.
const sealedForm = /^v1\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{22})$/;

export class WebhookSecretKeys {
  private readonly byTenant = new Map<string, Buffer>();

  constructor(private readonly masterSecret: Buffer) {
    assert(masterSecret.length >= masterSecretBytesMin, `the webhook secret key has at least ${masterSecretBytesMin} bytes`);
  }

  private keyOf(tenantId: string): Buffer {
    let key = this.byTenant.get(tenantId);
    if (key === undefined) {
      key = Buffer.from(hkdfSync("sha256", this.masterSecret, derivationSalt, `tenant:${tenantId}`, 32));
      this.byTenant.set(tenantId, key);
    }
    return key;
  }

  /** The secret sealed for its row: `v1.<nonce>.<ciphertext>.<tag>`. */
  seal(tenantId: string, endpointId: string, secret: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.keyOf(tenantId), nonce);
    cipher.setAAD(associatedData(tenantId, endpointId));
    const body = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
    return `v1.${nonce.toString("base64url")}.${body.toString("base64url")}.${cipher.getAuthTag().toString("base64url")}`;
  }

  /** The secret of a row, opened; throws when the key is not the one it was sealed with. */
  open(tenantId: string, endpointId: string, sealed: string): string {
    const parts = sealedForm.exec(sealed);
    if (!parts) throw new Error(`the stored secret of webhook endpoint ${endpointId} is not a sealed secret (v1.<nonce>.<ciphertext>.<tag>)`);
    const [nonce, body, tag] = parts.slice(1).map((part) => Buffer.from(part, "base64url")) as [Buffer, Buffer, Buffer];
    const decipher = createDecipheriv("aes-256-gcm", this.keyOf(tenantId), nonce);
    decipher.setAAD(associatedData(tenantId, endpointId));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
    } catch {
      throw new Error(`the webhook secret key does not open the stored secret of endpoint ${endpointId}:`
        + ` is ${webhookKeyFileName} (or CLEARLINE_WEBHOOK_SECRET_KEY) the one it was sealed with?`);
    }
  }
}

function associatedData(tenantId: string, endpointId: string): Buffer {
  return Buffer.from(`${tenantId}\u0000${endpointId}`, "utf8");
}

/** The key from configuration (hex, at least 64 digits), else the key file, created on first use. */
export function loadWebhookSecretKeys(options: { home: string; secretHex?: string | undefined }): WebhookSecretKeys {
  if (options.secretHex !== undefined && options.secretHex !== "") {
    assert(/^(?:[0-9a-fA-F]{2}){32,}$/.test(options.secretHex), "webhookSecretKey is validated by loadConfig");
    return new WebhookSecretKeys(Buffer.from(options.secretHex, "hex"));
  }
  return new WebhookSecretKeys(readOrCreateKeyFile(options.home, webhookKeyFileName));
}
