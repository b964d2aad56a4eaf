import { randomUUID } from "node:crypto";
import type { Pool } from "../../src/db/pool.ts";
import { ApiClient } from "./api-client.ts";
import { givenTenant, startTestApi, type TestApi } from "./api-server.ts";

export interface ApiWorld {
  api: TestApi;
  client: ApiClient;
  tenantId: string;
  apiKey: string;
}

/** A tenant with a funded customer, a second customer and a settlement account, behind a live API. */
export async function givenApiWorld(pool: Pool, tenantName: string): Promise<ApiWorld> {
  const api = await startTestApi(pool);
  const { tenantId, apiKey } = await givenTenant(pool, tenantName);
  const client = new ApiClient(api.baseUrl, apiKey);
  for (const [id, kind] of [["settlement", "settlement"], ["alice", "customer"], ["bob", "customer"]] as const) {
    const opened = await client.post("/v1/accounts", { id, kind, currency: "USD" });
    if (opened.status !== 201) throw new Error(`account ${id}: ${opened.status} ${opened.text}`);
  }
  return { api, client, tenantId, apiKey };
}

/** Funds a customer from settlement through the API itself. */
export async function fund(client: ApiClient, account: string, amount: string): Promise<void> {
  const response = await client.post("/v1/payments", {
    client_reference: `fund-${randomUUID()}`, amount, currency: "USD", debtor_account: "settlement", creditor_account: account,
  }, { "idempotency-key": randomUUID() });
  if (response.status !== 201) throw new Error(`funding failed: ${response.status} ${response.text}`);
}

export function paymentRequest(clientReference: string, amount = "10.00", extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { client_reference: clientReference, amount, currency: "USD", debtor_account: "alice", creditor_account: "bob", ...extra };
}

export async function ledgerCounts(pool: Pool, tenantId: string): Promise<{ transfers: number; entries: number }> {
  const { rows } = await pool.query(
    "SELECT (SELECT count(*) FROM transfer WHERE tenant_id = $1)::int AS transfers, (SELECT count(*) FROM ledger_entry WHERE tenant_id = $1)::int AS entries",
    [tenantId],
  );
  return rows[0];
}
