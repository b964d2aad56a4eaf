import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * The Standard Webhooks signing scheme (standardwebhooks.com): the secret is `whsec_` + base64
 * of random bytes; the signature is `v1,` + base64(HMAC-SHA256(key, `${id}.${timestamp}.${body}`))
 * with `timestamp` in whole seconds since the epoch. Pure: no clock, no network.
 */
const SECRET_PREFIX = "whsec_";
const SECRET_BYTES = 32;

export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString("base64");
}

function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error("a webhook signing secret starts with whsec_");
  return Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
}

export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac("sha256", secretKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/** Whether any `v1,` signature in the space-separated header value matches (a rotating sender sends several). */
export function verifyWebhook(secret: string, id: string, timestampSeconds: number, body: string, signatureHeader: string): boolean {
  const expected = Buffer.from(signWebhook(secret, id, timestampSeconds, body));
  return signatureHeader.split(" ").some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
