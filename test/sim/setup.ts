import { loadCardKeys } from "../../src/cards/card-key.ts";
import { addCard, withLuhnCheckDigit } from "../../src/cards/cards.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import { addAccountAlias, createPartner } from "../../src/partners/partners.ts";
import { routingCheckDigit } from "../../src/protocols/ach/routing.ts";
import { createTenant } from "../../src/tenants/tenants.ts";
import { simBounds } from "./bounds.ts";
import type { SimContext } from "./context.ts";
import { httpCall } from "./http.ts";
import { minorText } from "./money.ts";
import { nextIdempotencyKey } from "./world.ts";

/**
 * Step 0, the same for every seed: a tenant, its accounts opened and the customers funded through
 * the API (as test/api does), a clearing partner with an alias per customer (so ACH entries reach
 * them), and one card per customer for the ISO 8583 channel.
 */
export async function setUpWorld(ctx: SimContext, cardHashSecretHex: string, home: string): Promise<void> {
  const { world, pool } = ctx;
  const tenant = await createTenant(pool, world.tenantName);
  if (!tenant.ok) throw new Error(`tenant: ${tenant.error.message}`);
  world.tenantId = tenant.value.tenantId;
  world.apiKey = tenant.value.apiKey;
  world.customers = Array.from({ length: simBounds.customers }, (_, i) => `customer-${i + 1}`);
  const accounts: Array<[string, string]> = [[world.settlement, "settlement"], [world.merchant, "customer"], ...world.customers.map((c): [string, string] => [c, "customer"])];
  for (const [id, kind] of accounts) {
    const opened = await httpCall(ctx.service.baseUrl, world.apiKey, "POST", "/v1/accounts", { id, kind, currency: "USD" });
    if (opened.kind !== "answer" || opened.status !== 201) throw new Error(`account ${id}: ${JSON.stringify(opened)}`);
  }
  for (const customer of world.customers) {
    const clientReference = `sim-${world.seed}-fund-${customer}`;
    const body = { client_reference: clientReference, amount: minorText(simBounds.customerFundingMinor), currency: "USD", debtor_account: world.settlement, creditor_account: customer };
    const idempotencyKey = nextIdempotencyKey(world);
    const funded = await httpCall(ctx.service.baseUrl, world.apiKey, "POST", "/v1/payments", body, { "idempotency-key": idempotencyKey });
    if (funded.kind !== "answer" || funded.status !== 201) throw new Error(`funding ${customer}: ${JSON.stringify(funded)}`);
    world.payments.push({ clientReference, idempotencyKey, body, told: "applied" });
  }
  const partner = await createPartner(pool, world.tenantId, world.partnerName);
  if (!partner.ok) throw new Error(`partner: ${partner.error.message}`);
  for (const [index, customer] of world.customers.entries()) {
    const rdfi = `0910000${index + 1}`;
    const account = `ACCT${index + 1}`;
    const added = await addAccountAlias(pool, world.tenantId, `aba:${rdfi}${routingCheckDigit(rdfi)}:${account}`, customer);
    if (!added.ok) throw new Error(`alias: ${added.error.message}`);
    world.aliases.push({ rdfi, account, accountId: customer });
  }
  const keys = loadCardKeys({ home, secretHex: cardHashSecretHex });
  for (const [index, customer] of world.customers.entries()) {
    const pan = withLuhnCheckDigit(`476173${String(index + 1).padStart(9, "0")}`);
    await withTransaction(pool, async (tx) => {
      const added = await addCard(tx, keys, { tenantId: world.tenantId, pan, accountId: customer });
      if (!added.ok) throw new Error(`card: ${added.error.message}`);
    });
    world.cards.push({ pan, accountId: customer });
  }
}
