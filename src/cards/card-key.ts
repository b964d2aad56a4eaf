import { createHmac, hkdfSync, randomBytes } from "node:crypto";
import { closeSync, constants, existsSync, linkSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import { assert } from "../assert.ts";

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
  mkdirSync(options.home, { recursive: true, mode: 0o700 });
  return new CardKeys(readOrCreateKeyFile(path.join(options.home, cardKeyFileName)));
}

function readOrCreateKeyFile(file: string): Buffer {
  if (!existsSync(file)) {
    // Written whole under a private name, then linked into place: of two processes starting at
    // once, one links and the other gets EEXIST and reads the winner's complete file.
    const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
    const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      writeSync(fd, randomBytes(32).toString("hex") + "\n");
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(temporary, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      unlinkSync(temporary);
    }
  }
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) throw new Error(`${file} must be readable by its owner only (mode 0600), it is ${mode.toString(8)}`);
  const text = readFileSync(file, "utf8").trim();
  if (!/^(?:[0-9a-f]{2}){32,}$/.test(text)) throw new Error(`${file} does not hold a hex secret of at least 32 bytes`);
  return Buffer.from(text, "hex");
}
