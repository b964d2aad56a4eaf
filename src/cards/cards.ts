import type { Queryable } from "../db/pool.ts";
import type { Tx } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { findAccount, openAccount } from "../ledger/index.ts";
import { limits } from "../config/limits.ts";
import { gatewayAccounts } from "../normalize/from-iso8583.ts";
import { maskPan } from "../protocols/iso8583/index.ts";
import type { CardKeys } from "./card-key.ts";

/**
 * The card registry: a card is its keyed hash, BIN and last four, linked to one customer
 * account. The PAN passes through these functions and is never stored, logged or returned.
 */
export const binDigits = 6; // the issuer identification number as routed here (ISO/IEC 7812 six-digit BIN)

export interface CardIdentity {
  cardHash: string;
  bin: string;
  lastFour: string;
  panMasked: string;
}

export function isPanWellFormed(pan: string): boolean {
  return /^\d{12,19}$/.test(pan);
}

/** The Luhn sum of ISO/IEC 7812 over `digits`, doubling every second digit from the right when `doubleFirst`. */
function luhnSum(digits: string, doubleFirst: boolean): number {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === (doubleFirst ? 0 : 1)) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum;
}

/** The Luhn check digit of ISO/IEC 7812: catches a mistyped digit when a card is registered. */
export function luhnValid(pan: string): boolean {
  return luhnSum(pan, false) % 10 === 0;
}

/** `body` with its Luhn check digit appended (test and benchmark card numbers). */
export function withLuhnCheckDigit(body: string): string {
  return body + String((10 - (luhnSum(body, true) % 10)) % 10);
}

export function cardIdentity(keys: CardKeys, tenantId: string, pan: string): CardIdentity {
  return { cardHash: keys.cardHash(tenantId, pan), bin: pan.slice(0, binDigits), lastFour: pan.slice(-4), panMasked: maskPan(pan) };
}

export async function openGatewayAccounts(tx: Queryable, tenantId: string, currency: string): Promise<void> {
  for (const [accountId, kind] of [[gatewayAccounts.holds(currency), "holds"], [gatewayAccounts.scheme(currency), "clearing"], [gatewayAccounts.suspense(currency), "suspense"]] as const) {
    const opened = await openAccount(tx, { tenantId, accountId, kind, currency });
    if (!opened.ok) throw new Error(`gateway account ${accountId}: ${opened.error.message}`);
  }
}

export type AddCardOutcome = { kind: "created" | "exists"; card: CardIdentity & { accountId: string } };

/** Links a card to a customer account. The same card and account again is `exists`; another account is refused. */
export async function addCard(tx: Tx, keys: CardKeys, request: { tenantId: string; pan: string; accountId: string }): Promise<Result<AddCardOutcome, Finding>> {
  const { tenantId, pan, accountId } = request;
  if (!isPanWellFormed(pan) || !luhnValid(pan)) {
    return fail(finding("ISO8583_CARD_PAN_INVALID", "a PAN is 12 to 19 digits with a valid Luhn check digit", { field: "pan" }, { valueMasked: maskPan(pan.replace(/\D/g, "")) }));
  }
  const account = await findAccount(tx, tenantId, accountId);
  if (!account) return fail(finding("ISO8583_CARD_ACCOUNT_UNKNOWN", `account ${accountId} does not exist`, { field: "account" }));
  if (account.kind !== "customer") return fail(finding("ISO8583_CARD_ACCOUNT_NOT_CUSTOMER", `account ${accountId} is a ${account.kind} account`, { field: "account" }));
  const card = cardIdentity(keys, tenantId, pan);

  await tx.query("INSERT INTO card_issuer_bin (tenant_id, bin) VALUES ($1, $2) ON CONFLICT DO NOTHING", [tenantId, card.bin]);
  const owner = await tx.query<{ tenant_id: string }>("SELECT tenant_id FROM card_issuer_bin WHERE bin = $1", [card.bin]);
  if (owner.rows[0]?.tenant_id !== tenantId) {
    return fail(finding("ISO8583_CARD_BIN_OTHER_TENANT", `BIN ${card.bin} is routed to another tenant`, { field: "pan" }, { valueMasked: card.panMasked }));
  }
  await openGatewayAccounts(tx, tenantId, account.currency);

  const inserted = await tx.query(
    `INSERT INTO card (tenant_id, card_hash, bin, last_four, account_id) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (tenant_id, card_hash) DO NOTHING`,
    [tenantId, card.cardHash, card.bin, card.lastFour, accountId],
  );
  if (inserted.rowCount === 1) return ok({ kind: "created", card: { ...card, accountId } });
  const existing = await tx.query<{ account_id: string }>("SELECT account_id FROM card WHERE tenant_id = $1 AND card_hash = $2", [tenantId, card.cardHash]);
  if (existing.rows[0]?.account_id === accountId) return ok({ kind: "exists", card: { ...card, accountId } });
  return fail(finding("ISO8583_CARD_LINKED_ELSEWHERE", `card ${card.panMasked} is linked to another account`, { field: "account" }, { valueMasked: card.panMasked }));
}

export type CardRoute =
  | { kind: "unknown_issuer" }
  | { kind: "unknown_card"; tenantId: string; card: CardIdentity }
  | { kind: "card"; tenantId: string; card: CardIdentity; accountId: string; accountCurrency: string };

/** The tenant that issues cards of this BIN: how a message without a PAN (a 0500) is routed, as a PAN's first six digits route an authorization. */
export async function issuerTenantOf(db: Queryable, bin: string): Promise<string | undefined> {
  const issuer = await db.query<{ tenant_id: string }>("SELECT tenant_id FROM card_issuer_bin WHERE bin = $1", [bin]);
  return issuer.rows[0]?.tenant_id;
}

/**
 * The tenants of the BINs this process routed, per database handle. A BIN row is never updated or
 * deleted (the BIN is unique, addCard only inserts), so a BIN once routed stays with its tenant;
 * an unknown BIN is not remembered (it may be registered any time).
 */
const binRoutes = new WeakMap<Queryable, Map<string, string>>();

async function routedTenantOf(db: Queryable, bin: string): Promise<string | undefined> {
  let routes = binRoutes.get(db);
  if (routes === undefined) {
    routes = new Map();
    binRoutes.set(db, routes);
  }
  const known = routes.get(bin);
  if (known !== undefined) return known;
  const tenantId = await issuerTenantOf(db, bin);
  if (tenantId !== undefined && routes.size < limits.iso8583.binRoutesCachedMax) routes.set(bin, tenantId);
  return tenantId;
}

/** The tenant that issues this PAN (by its BIN), or undefined: the first step of inbound routing. */
export async function issuerOfPan(db: Queryable, pan: string): Promise<string | undefined> {
  if (!isPanWellFormed(pan)) return undefined;
  return routedTenantOf(db, pan.slice(0, binDigits));
}

/**
 * Inbound routing: the BIN names the tenant, the tenant's keyed hash names the card and its
 * account, with the account's currency (accounts never change currency: migration 0009).
 */
export async function routeCard(db: Queryable, keys: CardKeys, pan: string): Promise<CardRoute> {
  const tenantId = await issuerOfPan(db, pan);
  if (tenantId === undefined) return { kind: "unknown_issuer" };
  const card = cardIdentity(keys, tenantId, pan);
  const found = (await cardAccountsOf(db, tenantId, [card.cardHash])).get(card.cardHash);
  return found === undefined ? { kind: "unknown_card", tenantId, card } : { kind: "card", tenantId, card, accountId: found.accountId, accountCurrency: found.currency };
}

/**
 * The accounts (with their currency) of these cards of one tenant, in one statement: a batch of
 * inbound messages is routed at once. A card not registered is absent from the map. Prepared once
 * per connection (named): every inbound message runs it. The card and its account are each one
 * primary-key probe per card, so no plan, generic or made without statistics, can turn it into a
 * scan of the tenant's cards or accounts (docs/decisions/0052).
 */
export async function cardAccountsOf(db: Queryable, tenantId: string, cardHashes: readonly string[]): Promise<Map<string, { accountId: string; currency: string }>> {
  const found = await db.query<{ card_hash: string; account_id: string; currency: string }>({
    name: "card_accounts",
    text: `SELECT c.card_hash, c.account_id, (SELECT a.currency FROM account a WHERE a.tenant_id = $1 AND a.account_id = c.account_id) AS currency
             FROM unnest($2::text[]) AS w(card_hash)
            CROSS JOIN LATERAL (SELECT card_hash, account_id FROM card WHERE tenant_id = $1 AND card_hash = w.card_hash OFFSET 0) c`,
    values: [tenantId, cardHashes],
  });
  return new Map(found.rows.map((row) => [row.card_hash, { accountId: row.account_id, currency: row.currency }]));
}
