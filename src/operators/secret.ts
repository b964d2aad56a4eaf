import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";
import { limits } from "../config/limits.ts";

/** node:crypto scrypt as a promise (util.promisify loses the options overload's types). */
function scryptAsync(secret: string, salt: Buffer, keyBytes: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(secret, salt, keyBytes, options, (error, key) => (error ? reject(error) : resolve(key))));
}

export function newOperatorSecret(): string {
  return `op_${randomBytes(limits.http.operatorSecretBytes).toString("base64url")}`;
}

/** `scrypt$N$r$p$salt$key`: the parameters travel with the hash, so raising the cost later keeps old hashes readable. */
export async function hashOperatorSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const cost = limits.http.scryptCost;
  const blockSize = limits.http.scryptBlockSize;
  const key = await scryptAsync(secret, salt, limits.http.scryptKeyBytes, { N: cost, r: blockSize, p: 1 });
  return ["scrypt", cost, blockSize, 1, salt.toString("base64url"), key.toString("base64url")].join("$");
}

export async function secretMatches(secret: string, stored: string): Promise<boolean> {
  const [scheme, cost, blockSize, parallel, salt, key] = stored.split("$");
  if (scheme !== "scrypt" || !cost || !blockSize || !parallel || !salt || !key) return false;
  const expected = Buffer.from(key, "base64url");
  const derived = await scryptAsync(secret, Buffer.from(salt, "base64url"), expected.length, { N: Number(cost), r: Number(blockSize), p: Number(parallel) });
  return timingSafeEqual(derived, expected);
}
