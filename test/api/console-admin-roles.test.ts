import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { givenApiWorld, type ApiWorld } from "../support/api-scenario.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenOperator } from "../support/ops-client.ts";

/** A console session over plain HTTP: the cookie from the sign-in form, the CSRF token of a page. */
async function consoleSession(base: string, tenant: string, name: string, secret: string) {
  const signedIn = await fetch(`${base}/console/sign-in`, {
    method: "POST", redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ tenant, name, secret }).toString(),
  });
  expect(signedIn.status).toBe(303);
  const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const files = await (await fetch(`${base}/console/files`, { headers: { cookie } })).text();
  const csrf = /data-csrf="([^"]+)"/.exec(files)?.[1] ?? "";
  return {
    get: (path: string) => fetch(`${base}${path}`, { headers: { cookie }, redirect: "manual" }),
    post: (path: string, fields: Record<string, string>) => fetch(`${base}${path}`, {
      method: "POST", redirect: "manual",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf_token: csrf, idempotency_key: crypto.randomUUID(), ...fields })
        .toString(),
    }),
  };
}

describe("the console's admin forms refuse every role but admin, on the server", () => {
  let db: TestDatabase;
  let world: ApiWorld;
  const secrets: Record<string, string> = {};
  beforeAll(async () => {
    db = await createTestDatabase();
    world = await givenApiWorld(db.pool, "roles");
    secrets.ann = await givenOperator(db.pool, world.tenantId, "ann", "approver");
    secrets.vic = await givenOperator(db.pool, world.tenantId, "vic", "viewer");
    secrets.ada = await givenOperator(db.pool, world.tenantId, "ada", "admin");
  }, 120_000);
  afterAll(async () => {
    await world?.api.close();
    await db?.drop();
  });

  const operatorIdOf = async (name: string) => (await db.pool.query<{ operator_id: string }>(
    "SELECT operator_id FROM operator WHERE tenant_id = $1 AND name = $2", [world.tenantId, name],
  )).rows[0]?.operator_id ?? "";

  for (const name of ["ann", "vic"]) {
    it(`refuses ${name}'s admin pages and forms with 403, and changes nothing`, async () => {
      const session = await consoleSession(world.api.baseUrl, "roles", name, secrets[name] ?? "");
      const target = await operatorIdOf("ada");
      const attempts = [
        await session.get("/console/operators"),
        await session.get("/console/webhooks"),
        await session.post(`/console/operators/${target}/disable`, { reason: "take over" }),
        await session.post(`/console/operators/${target}/secret`, { reason: "take over" }),
        await session.post("/console/webhooks", {
          url: "http://127.0.0.1:9/steal", events: "payment.applied", reason: "exfiltrate",
        }),
        await session.post("/console/webhooks/ep_any/test", {}),
        await session.post("/console/webhooks/ep_any/remove", { reason: "x" }),
      ];
      expect(attempts.map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 403, 403]);
      const { rows } = await db.pool.query(
        `SELECT (SELECT count(*) FROM webhook_endpoint WHERE tenant_id = $1)::int AS endpoints,
                (SELECT count(*) FROM operator WHERE tenant_id = $1 AND disabled_at IS NOT NULL)::int
                  AS disabled`, [world.tenantId]);
      expect(rows[0]).toEqual({ endpoints: 0, disabled: 0 });
    }, 60_000);
  }

  it("refuses a viewer's source pause and statement run, and lets an admin disable an operator", async () => {
    const viewer = await consoleSession(world.api.baseUrl, "roles", "vic", secrets.vic ?? "");
    expect((await viewer.post("/console/sources/pause", { source: "iso8583", reason: "x" })).status)
      .toBe(403);
    expect((await viewer.post("/console/reconciliation/runs", {
      account: "settlement", from: "2026-01-01", to: "2026-01-01",
    })).status).toBe(403);
    const admin = await consoleSession(world.api.baseUrl, "roles", "ada", secrets.ada ?? "");
    const disabled = await admin.post(`/console/operators/${await operatorIdOf("vic")}/disable`,
      { reason: "left" });
    expect(disabled.status).toBe(200);
    expect((await viewer.get("/console/files")).status).toBe(303);   // the session ended
    const self = await admin.post(`/console/operators/${await operatorIdOf("ada")}/disable`,
      { reason: "oops" });
    expect(self.status).toBe(422);
  }, 60_000);
});
