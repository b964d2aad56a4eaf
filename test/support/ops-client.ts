import { randomUUID } from "node:crypto";
import type { Pool } from "../../src/db/pool.ts";
import { createOperator, type OperatorRole } from "../../src/operators/operators.ts";
import { ApiClient, type ApiResponse } from "./api-client.ts";

/** A signed-in operator: the session cookie and CSRF token as a browser would hold them. */
export interface OpsClient {
  name: string;
  cookie: string;
  csrfToken: string;
  get(path: string): Promise<ApiResponse>;
  /** A mutating request with the cookie, the CSRF token and a fresh Idempotency-Key unless `headers` say otherwise. */
  mutate(method: string, path: string, body: unknown, headers?: Record<string, string | undefined>): Promise<ApiResponse>;
}

export async function givenOperator(pool: Pool, tenantId: string, name: string, role: OperatorRole): Promise<string> {
  const created = await createOperator(pool, { tenantId, name, role });
  if (!created.ok) throw new Error(created.error.message);
  return created.value.secret;
}

export async function signIn(baseUrl: string, tenant: string, name: string, secret: string): Promise<OpsClient> {
  const anonymous = new ApiClient(baseUrl, undefined);
  const response = await anonymous.send("POST", "/v1/ops/session", { tenant, name, secret }, {});
  if (response.status !== 200) throw new Error(`sign-in of ${name}: ${response.status} ${response.text}`);
  const cookie = (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const csrfToken = response.json.csrf_token as string;
  return {
    name, cookie, csrfToken,
    get: (path) => anonymous.send("GET", path, undefined, { cookie }),
    // A header given as undefined is left out (a request without an Idempotency-Key).
    mutate: (method, path, body, headers = {}) => anonymous.send(method, path, body, Object.fromEntries(
      Object.entries({ cookie, "x-csrf-token": csrfToken, "idempotency-key": randomUUID(), ...headers }).filter((entry): entry is [string, string] => entry[1] !== undefined))),
  };
}
