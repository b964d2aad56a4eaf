import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Pool } from "../../src/db/pool.ts";
import { signedBalance, type AccountKind } from "../../src/ledger/account-kinds.ts";
import { createPartner, type Partner } from "../../src/partners/partners.ts";
import { ingestArrival, type IngestOptions } from "../../src/files/pipeline.ts";
import type { FileSource } from "../../src/files/receipt.ts";
import type { FileReport } from "../../src/files/report.ts";
import { createTenant } from "../../src/tenants/tenants.ts";

const fixturesDir = fileURLToPath(new URL("../../fixtures/", import.meta.url));

/** The natural key of payee two's entry in fixtures ach/original.ach (200.00) and ach/corrected.ach (205.00). */
export const PAYEE_TWO_KEY = "ach:23138010:231380100000002:1234567890:PPD:250305";

export function fixture(relative: string): Buffer {
  return readFileSync(path.join(fixturesDir, relative));
}

/** An ACH fixture with another effective entry date (YYMMDD) in every batch header. */
export function achFixtureDated(relative: string, yymmdd: string): Buffer {
  const lines = fixture(relative).toString("latin1").split("\n");
  const dated = lines.map((line) => line.startsWith("5")
    ? `${line.slice(0, 69)}${yymmdd}${line.slice(75)}` : line);
  return Buffer.from(dated.join("\n"), "latin1");
}

/**
 * ppd-credits-debits.ach (credits, debits, a zero-dollar entry) effective on another date: its
 * two batches reuse traces 1 and 2 (held as a trace reused in the file), so its first batch
 * comes from another company (9876543210 in its header and control), making them other entries.
 */
export function ppdCreditsDebitsDated(yymmdd: string): Buffer {
  let batch = 0;
  const content = achFixtureDated("ach/ppd-credits-debits.ach", yymmdd).toString("latin1");
  const lines = content.split("\n").map((line) => {
    if (line.startsWith("5")) batch += 1;
    if (batch !== 1) return line;
    if (line.startsWith("5")) return `${line.slice(0, 40)}9876543210${line.slice(50)}`;
    if (line.startsWith("8")) return `${line.slice(0, 44)}9876543210${line.slice(54)}`;
    return line;
  });
  return Buffer.from(lines.join("\n"), "latin1");
}

export interface Scene {
  tenantId: string;
  partner: Partner;
}

/** A tenant and its clearing partner (settlement and suspense accounts in USD). */
export async function givenScene(pool: Pool, name: string): Promise<Scene> {
  const tenant = await createTenant(pool, name);
  if (!tenant.ok) throw new Error(tenant.error.message);
  const partner = await createPartner(pool, tenant.value.tenantId, `${name}-clearing`);
  if (!partner.ok) throw new Error(partner.error.message);
  return { tenantId: tenant.value.tenantId, partner: partner.value };
}

/** Receives and processes one file, as any source would. */
export async function ingest(pool: Pool, scene: Scene, content: Buffer, name: string, options: IngestOptions & { source?: FileSource } = {}): Promise<FileReport> {
  const report = await ingestArrival(pool, { tenantId: scene.tenantId, partnerId: scene.partner.partnerId, source: options.source ?? "cli", name, content }, options);
  if (!report.ok) throw new Error(report.error.message);
  return report.value;
}

/** Every account's balance of a tenant (signed by its normal side), derived from entries. */
export async function balances(pool: Pool, tenantId: string): Promise<Record<string, bigint>> {
  const { rows } = await pool.query<{ account_id: string; kind: AccountKind; debits: string; credits: string }>(
    `SELECT a.account_id, a.kind,
            coalesce(sum(e.amount_minor) FILTER (WHERE e.direction = 'D'), 0)::text AS debits,
            coalesce(sum(e.amount_minor) FILTER (WHERE e.direction = 'C'), 0)::text AS credits
       FROM account a LEFT JOIN ledger_entry e ON e.tenant_id = a.tenant_id AND e.account_id = a.account_id
      WHERE a.tenant_id = $1 GROUP BY a.account_id, a.kind ORDER BY a.account_id`, [tenantId]);
  return Object.fromEntries(rows.map((r) => [r.account_id, signedBalance(r.kind, BigInt(r.debits), BigInt(r.credits))]));
}

export async function transferCount(pool: Pool, tenantId: string): Promise<number> {
  const { rows } = await pool.query<{ n: bigint }>("SELECT count(*) AS n FROM transfer WHERE tenant_id = $1", [tenantId]);
  return Number(rows[0]?.n ?? 0n);
}

export function settlementOf(scene: Scene): string {
  return `partner.${scene.partner.name}.settlement.USD`;
}

export function suspenseOf(scene: Scene): string {
  return `partner.${scene.partner.name}.suspense.USD`;
}

export const noOutcomes = { applied: 0, duplicate: 0, conflict: 0, suspect: 0, rejected: 0, orphan: 0 };

/** A tenant with a partner of a fixed name, so that two tenants' ledgers use the same account ids. */
export async function givenTwin(pool: Pool, tenantName: string, partnerName = "clearing"): Promise<Scene> {
  const tenant = await createTenant(pool, tenantName);
  if (!tenant.ok) throw new Error(tenant.error.message);
  const partner = await createPartner(pool, tenant.value.tenantId, partnerName);
  if (!partner.ok) throw new Error(partner.error.message);
  return { tenantId: tenant.value.tenantId, partner: partner.value };
}

/** A tenant's ledger as tenant-free lines: transfer, kind, value date, entry, account, side, amount. */
export async function ledgerLines(pool: Pool, tenantId: string): Promise<string[]> {
  // Fresh statistics: after a bulk ingest (100,000-entry kill tests) autovacuum has often not
  // analyzed yet, and a plan made on empty-table estimates ran into the statement timeout.
  await pool.query("ANALYZE transfer, ledger_entry");
  const { rows } = await pool.query<{ line: string }>(
    `SELECT concat_ws(' ', t.transfer_key, t.kind, t.value_date, e.entry_key, e.account_id, e.direction, e.amount_minor, e.currency) AS line
       FROM transfer t JOIN ledger_entry e ON e.tenant_id = t.tenant_id AND e.transfer_key = t.transfer_key
      WHERE t.tenant_id = $1 ORDER BY e.entry_key`, [tenantId]);
  return rows.map((r) => r.line);
}

/**
 * A valid N-entry PPD file with one batch (traces unique across the file), written to `file`;
 * files given different `firstTrace` ranges have no natural key in common.
 */
export async function writeGeneratedAch(
  file: string, entries: number, seed = 1, firstTrace = 1,
): Promise<void> {
  const { generateAchChunks } = await import("../../src/protocols/ach/generator.ts");
  const { writeFileSync } = await import("node:fs");
  const chunks = generateAchChunks({ entries, batches: 1, seed, firstTrace });
  writeFileSync(file, Buffer.concat([...chunks]));
}
