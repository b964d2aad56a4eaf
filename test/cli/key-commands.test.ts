import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { durationMs } from "../../src/cli/commands/key.ts";
import { TenantAuthenticator } from "../../src/tenants/key-authenticator.ts";
import { givenTenant } from "../support/api-server.ts";
import { runCliInProcess } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** `clearline key create|list|revoke|rotate` (decision 0097), as an operator runs them. */
describe("clearline key", () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  let tenant: { tenantId: string; apiKey: string };
  beforeAll(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url };
    tenant = await givenTenant(db.pool, "keys-cli");
  });
  afterAll(() => db.drop());

  const run = async (args: string[]) => runCliInProcess(["key", ...args, "--tenant", "keys-cli"], env);
  const json = async (args: string[]): Promise<Json> => {
    const ran = await run([...args, "--json"]);
    expect(ran.exitCode, ran.stderr).toBe(0);
    return JSON.parse(ran.stdout) as Json;
  };

  it("create prints the key once; list shows it by prefix with its last use, never in full", async () => {
    const created = await json(["create", "reporting", "--scopes", "read_only"]);
    expect(created).toMatchObject({ name: "reporting", scopes: ["read_only"], state: "active", last_used_at: null });
    expect(created.api_key).toMatch(/^cl_/);
    expect(created.prefix).toBe(String(created.api_key).slice(0, 12));

    await new TenantAuthenticator(db.pool).authenticate(String(created.api_key));
    const listed = await json(["list"]);
    const shown = listed.keys.find((k: Json) => k.key_id === created.key_id);
    expect(shown.last_used_at).not.toBeNull();
    const text = (await run(["list"])).stdout;
    expect(text).toContain(created.prefix);
    expect(text).toContain("last used 20");
    for (const output of [JSON.stringify(listed), text]) {
      expect(output).not.toContain(created.api_key);
      expect(output).not.toContain(tenant.apiKey);
    }
  });

  it("rotate prints the new key and the old one's window; revoke by prefix refuses it", async () => {
    const made = await json(["create", "ci", "--scopes", "payments,files"]);
    const rotated = await json(["rotate", made.key_id, "--overlap", "30m"]);
    expect(rotated.old).toMatchObject({ key_id: made.key_id, state: "expiring", replaced_by: rotated.new.key_id });
    expect(rotated.new).toMatchObject({ name: "ci", scopes: ["payments", "files"] });
    const authenticator = new TenantAuthenticator(db.pool);
    expect(await authenticator.authenticate(String(made.api_key))).toBeDefined();
    expect(await json(["revoke", made.prefix])).toMatchObject({ key_id: made.key_id, state: "revoked" });
    expect(await authenticator.authenticate(String(made.api_key))).toBeUndefined();
    expect(await authenticator.authenticate(String(rotated.new.api_key))).toBeDefined();
  });

  it("refuses bad scopes, an unknown key and a bad overlap with exit code 2, naming the code", async () => {
    const refusals = [
      [["create", "x", "--scopes", "admin"], "API_KEY_SCOPES_INVALID"],
      [["revoke", "key_nope"], "API_KEY_UNKNOWN"],
      [["rotate", "key_nope", "--overlap", "soon"], "API_KEY_OVERLAP_INVALID"],
      [["rotate", "key_nope", "--overlap", "31d"], "API_KEY_OVERLAP_INVALID"],
    ] as const;
    for (const [args, code] of refusals) {
      const ran = await run([...args]);
      expect(ran.exitCode, args.join(" ")).toBe(2);
      expect(ran.stderr).toContain(code);
    }
  });

  it("reads an overlap as 0 or a number with s, m, h or d", () => {
    expect(["0", "90s", "30m", "24h", "7d", "", "1w", "-1h", "1.5h"].map(durationMs)).toEqual([
      0, 90_000, 1_800_000, 86_400_000, 604_800_000, undefined, undefined, undefined, undefined,
    ]);
  });
});
