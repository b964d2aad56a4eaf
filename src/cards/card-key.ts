import { createHmac, hkdfSync } from "node:crypto";
import { assert } from "../assert.ts";
import { readOrCreateKeyFile } from "../config/key-file.ts";

/**
 * Card identity without the card number (docs/decisions/0020): a master secret, from
 * configuration (CLEARLINE_CARD_HASH_SECRET) or generated once into CLEARLINE_HOME/card-hash.key
 * with mode 0600; one key per tenant derived from it with HKDF; a card is HMAC-SHA256(tenant key,
 * PAN). A stolen database without the secret cannot be searched for a PAN, and one tenant's
 * hashes say nothing about another's cards.
 */
export const cardKeyFileName = "card-hash.key";
const masterSecretBytesMin = 32; // 256 bits: an HMAC key no weaker than its hash
const derivationSalt = "clearline card hash v1";

export class CardKeys {
  private readonly byTenant = new Map<string, Buffer>();

  constructor(private readonly masterSecret: Buffer) {
    assert(masterSecret.length >= masterSecretBytesMin, `the card hash secret has at least ${masterSecretBytesMin} bytes`);
  }

  private keyOf(tenantId: string): Buffer {
    let key = this.byTenant.get(tenantId);
    if (key === undefined) {
      key = Buffer.from(hkdfSync("sha256", this.masterSecret, derivationSalt, `tenant:${tenantId}`, 32));
      this.byTenant.set(tenantId, key);
    }
    return key;
  }

  /** The card's identity within its tenant: 64 lowercase hex characters. */
  cardHash(tenantId: string, pan: string): string {
    return createHmac("sha256", this.keyOf(tenantId)).update(pan).digest("hex");
  }
}

/** The secret from configuration (hex, at least 64 digits), else the key file, created on first use. */
export function loadCardKeys(options: { home: string; secretHex?: string | undefined }): CardKeys {
  if (options.secretHex !== undefined && options.secretHex !== "") {
    assert(/^(?:[0-9a-fA-F]{2}){32,}$/.test(options.secretHex), "cardHashSecret is validated by loadConfig");
    return new CardKeys(Buffer.from(options.secretHex, "hex"));
  }
  return new CardKeys(readOrCreateKeyFile(options.home, cardKeyFileName));
}
