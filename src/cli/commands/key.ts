import type { Command } from "commander";
import { limits } from "../../config/limits.ts";
import {
  createApiKey, listApiKeys, revokeApiKey, rotateApiKey, type ApiKeyListing,
} from "../../tenants/api-keys.ts";
import { tenantOrExit, withDatabase } from "../context.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";

const UNIT_MS: Readonly<Record<string, number>> = {
  s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000,
};

/** "0", "90s", "30m", "24h", "7d" -> milliseconds; undefined when it is none of these. */
export function durationMs(text: string): number | undefined {
  if (text === "0") return 0;
  const match = /^(\d{1,6})([smhd])$/.exec(text);
  const unitMs = match?.[2] === undefined ? undefined : UNIT_MS[match[2]];
  return match?.[1] === undefined || unitMs === undefined ? undefined : Number(match[1]) * unitMs;
}

/** A key as --json shows it: snake_case, the prefix and never the key or its hash. */
function keyJson(key: ApiKeyListing): Record<string, unknown> {
  return {
    key_id: key.keyId, name: key.name, prefix: key.prefix, scopes: key.scopes, state: key.state,
    created_at: key.createdAt.toISOString(), expires_at: key.expiresAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null, replaced_by: key.replacedBy,
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
  };
}

function keyLine(key: ApiKeyListing): string {
  const until = key.expiresAt ? ` until ${key.expiresAt.toISOString()}` : "";
  const used = key.lastUsedAt ? key.lastUsedAt.toISOString() : "never";
  return `${key.keyId}  ${key.prefix ?? "(made before 0033)"}…  ${key.name}  `
    + `[${key.scopes.join(",")}]  ${key.state}${until}  last used ${used}`;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: { code: string; message: string } };

function orExit<T>(result: Outcome<T>): T {
  if (!result.ok) {
    throw new CliError(`${result.error.code}: ${result.error.message}`, exitCodes.usage);
  }
  return result.value;
}

interface Options { tenant: string; json?: boolean }

export function registerKeyCommands(program: Command): void {
  const key = program.command("key")
    .description("a tenant's API keys: create, list, revoke, rotate");
  key
    .command("create <name>")
    .description("create an API key; prints it once (only a hash is stored)")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .option("--scopes <scopes>", "read_only | any of payments,files,operations",
      "payments,files,operations")
    .option("--json", "machine-readable output")
    .action(async (name: string, options: Options & { scopes: string }) => {
      const scopes = options.scopes.split(",");
      const created = orExit(await withDatabase(async (db) => createApiKey(db.pool,
        (await tenantOrExit(db.pool, options.tenant)).tenantId, { name, scopes })));
      if (options.json) printJson({ ...keyJson(created.key), api_key: created.apiKey });
      else {
        printLine(keyLine(created.key));
        printLine(`api key (shown once, store it now): ${created.apiKey}`);
      }
    });
  key
    .command("list")
    .description("a tenant's keys by prefix, with scopes, state and last use")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .option("--json", "machine-readable output")
    .action(async (options: Options) => {
      const keys = await withDatabase(async (db) =>
        listApiKeys(db.pool, (await tenantOrExit(db.pool, options.tenant)).tenantId));
      if (options.json) printJson({ keys: keys.map(keyJson) });
      else for (const listed of keys) printLine(keyLine(listed));
    });
  registerKeyChanges(key);
}

function registerKeyChanges(key: Command): void {
  key
    .command("revoke <key>")
    .description("revoke a key (its id or prefix) now: every serve process refuses it in seconds")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .option("--json", "machine-readable output")
    .action(async (keyRef: string, options: Options) => {
      const revoked = orExit(await withDatabase(async (db) => revokeApiKey(db.pool,
        (await tenantOrExit(db.pool, options.tenant)).tenantId, keyRef)));
      if (options.json) printJson(keyJson(revoked));
      else printLine(keyLine(revoked));
    });
  const overlapDefault = `${limits.http.apiKeyOverlapMsDefault / 3_600_000}h`;
  key
    .command("rotate <key>")
    .description("a new key in place of this one; the old one works until the overlap ends")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .option("--overlap <duration>", "how long the old key keeps working: 0, 90s, 30m, 24h, 7d",
      overlapDefault)
    .option("--json", "machine-readable output")
    .action(async (keyRef: string, options: Options & { overlap: string }) => {
      const overlapMs = durationMs(options.overlap);
      if (overlapMs === undefined) {
        throw new CliError("API_KEY_OVERLAP_INVALID: --overlap is 0 or a number with s, m, h or d",
          exitCodes.usage);
      }
      const rotated = orExit(await withDatabase(async (db) => rotateApiKey(db.pool,
        (await tenantOrExit(db.pool, options.tenant)).tenantId, keyRef, overlapMs)));
      if (options.json) {
        const made = { ...keyJson(rotated.created.key), api_key: rotated.created.apiKey };
        printJson({ old: keyJson(rotated.old), new: made });
      } else {
        printLine(`old: ${keyLine(rotated.old)}`);
        printLine(`new: ${keyLine(rotated.created.key)}`);
        printLine(`api key (shown once, store it now): ${rotated.created.apiKey}`);
      }
    });
}
