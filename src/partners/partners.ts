import { randomBytes } from "node:crypto";
import type { Queryable } from "../db/pool.ts";
import { sqlState } from "../db/transaction.ts";
import { fail, finding, ok, type Finding, type Result } from "../errors/finding.ts";
import { findAccount, openAccount } from "../ledger/index.ts";
import { parseAlias } from "../normalize/received-record.ts";
import type { PartnerAccounts } from "../normalize/posting-rules.ts";
import { currencyByCode } from "../protocols/iso4217/currency.ts";

/** A clearing partner: who sends files, and the accounts its records post against. */
export interface Partner {
  tenantId: string;
  partnerId: string;
  name: string;
  currency: string;
}

/** Account ids of a partner in a currency: readable, derived from the partner's name by a fixed rule. */
export function partnerAccountsOf(partner: Pick<Partner, "name">, currency: string): PartnerAccounts {
  return { settlement: `partner.${partner.name}.settlement.${currency}`, suspense: `partner.${partner.name}.suspense.${currency}` };
}

/**
 * The partner's settlement and suspense accounts in a currency, opened when missing (idempotent:
 * openAccount on an existing id of the same kind and currency is `exists`).
 */
export async function ensurePartnerAccounts(db: Queryable, partner: Partner, currency: string): Promise<Result<PartnerAccounts, Finding>> {
  const accounts = partnerAccountsOf(partner, currency);
  for (const [accountId, kind] of [[accounts.settlement, "settlement"], [accounts.suspense, "suspense"]] as const) {
    const opened = await openAccount(db, { tenantId: partner.tenantId, accountId, kind, currency });
    if (!opened.ok) return opened;
  }
  return ok(accounts);
}

/** Creates a partner with its settlement and suspense accounts in its currency. */
export async function createPartner(db: Queryable, tenantId: string, name: string, currency = "USD"): Promise<Result<Partner, Finding>> {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/.test(name)) {
    const detail = "a partner name is 1 to 63 letters, digits, '.', '_' or '-'";
    return fail(finding("PARTNER_NAME_INVALID", detail, { field: "name" }));
  }
  if (!currencyByCode(currency)) return fail(finding("CURRENCY_UNKNOWN", `unknown currency ${currency}`, { field: "currency" }));
  const partner: Partner = { tenantId, partnerId: `prt_${randomBytes(8).toString("hex")}`, name, currency };
  try {
    await db.query("INSERT INTO partner (tenant_id, partner_id, name, currency) VALUES ($1, $2, $3, $4)", [tenantId, partner.partnerId, name, currency]);
  } catch (error) {
    const exists = finding("PARTNER_EXISTS", `a partner named ${name} exists`, { field: "name" });
    if (sqlState(error) === "23505") return fail(exists);
    throw error;
  }
  const accounts = await ensurePartnerAccounts(db, partner, currency);
  return accounts.ok ? ok(partner) : accounts;
}

/** A partner by its id or its name. */
export async function findPartner(db: Queryable, tenantId: string, idOrName: string): Promise<Partner | undefined> {
  const { rows } = await db.query<{ partner_id: string; name: string; currency: string }>(
    "SELECT partner_id, name, currency FROM partner WHERE tenant_id = $1 AND (partner_id = $2 OR name = $2) ORDER BY partner_id = $2 DESC LIMIT 1",
    [tenantId, idOrName],
  );
  const row = rows[0];
  return row ? { tenantId, partnerId: row.partner_id, name: row.name, currency: row.currency } : undefined;
}

/** The names of these partners of a tenant, by id; an unknown id is absent. */
export async function partnerNamesOf(
  db: Queryable, tenantId: string, partnerIds: readonly string[],
): Promise<Map<string, string>> {
  const { rows } = await db.query<{ partner_id: string; name: string }>(
    `SELECT partner_id, name
       FROM partner
      WHERE tenant_id = $1 AND partner_id = ANY($2::text[])`,
    [tenantId, [...new Set(partnerIds)]]);
  return new Map(rows.map((r) => [r.partner_id, r.name]));
}

export async function listPartners(db: Queryable, tenantId: string): Promise<Partner[]> {
  const { rows } = await db.query<{ partner_id: string; name: string; currency: string }>(
    "SELECT partner_id, name, currency FROM partner WHERE tenant_id = $1 ORDER BY name", [tenantId]);
  return rows.map((r) => ({ tenantId, partnerId: r.partner_id, name: r.name, currency: r.currency }));
}

/** The partner a command names, or the tenant's only partner when none is named. */
export async function partnerForIngest(db: Queryable, tenantId: string, idOrName: string | undefined): Promise<Result<Partner, Finding>> {
  if (idOrName !== undefined) {
    const partner = await findPartner(db, tenantId, idOrName);
    if (partner) return ok(partner);
    return fail(finding("PARTNER_UNKNOWN", `no partner ${idOrName}`, { field: "partner" }));
  }
  const partners = await listPartners(db, tenantId);
  if (partners.length === 1 && partners[0]) return ok(partners[0]);
  const detail = partners.length === 0
    ? "the tenant has no partner: clearline partner add --tenant T NAME"
    : "the tenant has several partners: name one with --partner";
  return fail(finding("PARTNER_UNKNOWN", detail, { field: "partner" }));
}

/** Maps a counterparty alias to a ledger account; the same alias to the same account is `exists`. */
export async function addAccountAlias(db: Queryable, tenantId: string, aliasText: string, accountId: string): Promise<Result<"created" | "exists", Finding>> {
  const alias = parseAlias(aliasText);
  if (!alias) {
    const detail = `${aliasText} is not aba:<routing>:<account>, iban:<IBAN> or acct:<id>`;
    return fail(finding("PARTNER_ALIAS_INVALID", detail, { field: "alias" }));
  }
  if (!(await findAccount(db, tenantId, accountId))) return fail(finding("LEDGER_ACCOUNT_UNKNOWN", `account ${accountId} does not exist`, { field: "account" }));
  const inserted = await db.query("INSERT INTO account_alias (tenant_id, alias, account_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", [tenantId, alias, accountId]);
  if (inserted.rowCount === 1) return ok("created");
  const { rows } = await db.query<{ account_id: string }>("SELECT account_id FROM account_alias WHERE tenant_id = $1 AND alias = $2", [tenantId, alias]);
  if (rows[0]?.account_id === accountId) return ok("exists");
  const detail = `${alias} already maps to ${rows[0]?.account_id}`;
  return fail(finding("PARTNER_ALIAS_INVALID", detail, { field: "alias" }));
}

/** Aliases -> accounts (with their currency), in one statement; an alias that maps nowhere is absent. */
export async function resolveAliases(db: Queryable, tenantId: string, aliases: readonly string[]): Promise<Map<string, { accountId: string; currency: string }>> {
  if (aliases.length === 0) return new Map();
  const { rows } = await db.query<{ alias: string; account_id: string; currency: string }>(
    `SELECT a.alias, a.account_id, c.currency FROM account_alias a JOIN account c ON c.tenant_id = a.tenant_id AND c.account_id = a.account_id
      WHERE a.tenant_id = $1 AND a.alias = ANY($2::text[])`, [tenantId, [...new Set(aliases)]]);
  return new Map(rows.map((r) => [r.alias, { accountId: r.account_id, currency: r.currency }]));
}
