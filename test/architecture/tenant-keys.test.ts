import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Queryable } from "../../src/db/pool.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

/**
 * Growing past one primary (docs/operations/scaling.md): tenants are the distribution key, as a
 * distributed PostgreSQL such as Citus shards a multi-tenant schema. A table with a tenant_id is
 * distributed by it, so each of its primary and unique keys must hold tenant_id (the primary key
 * leads with it, as ARCHITECTURE.md says) and each foreign key to another distributed table must
 * join on it (co-location). Every other table is named here with what it would be and why.
 */
const notDistributed: Record<string, { kind: "reference" | "coordinator"; why: string }> = {
  tenant: { kind: "reference", why: "every request finds its tenant by API key hash before it knows the tenant; small, read on every request" },
  card_issuer_bin: { kind: "reference", why: "a card message is routed to the tenant that issues its BIN before the tenant is known: a BIN is unique across tenants" },
  schema_migration: { kind: "coordinator", why: "the schema's own bookkeeping" },
  fleet_lease: { kind: "coordinator", why: "which serve process runs which source, job and scheme link: the fleet's, not a tenant's (decision 0072)" },
  fleet_job_run: { kind: "coordinator", why: "the periods of the fleet's singleton jobs (decision 0072)" },
  iso8583_stan_counter: { kind: "coordinator", why: "the STAN counter of an outbound scheme connection, which serves every tenant" },
};

/**
 * Keys that break the rule today, each with the change that would end it. An entry that no longer
 * breaks the rule fails the test until it is removed: the list only shrinks.
 */
const knownViolations: Record<string, string> = {
  "operator: primary key (operator_id)": "key operator by (tenant_id, operator_id); sessions and proposals then name the tenant with the operator",
  "decision_proposal: foreign key (proposed_by) -> operator (operator_id)": "follows the operator key above",
  "decision_proposal: foreign key (approved_by) -> operator (operator_id)": "follows the operator key above",
  "decision_proposal: foreign key (cancelled_by) -> operator (operator_id)": "follows the operator key above",
  "operator_session: no tenant_id": "a session is found by its cookie's hash alone; the cookie would carry the tenant, and the table tenant_id",
  "operator_session: foreign key (operator_id) -> operator (operator_id)": "follows the two above",
};

interface KeyRow { table: string; primary: boolean; columns: string[] }
interface ForeignRow { table: string; columns: string[]; target: string; targetColumns: string[] }

async function schemaOf(db: Queryable, schema: string): Promise<{ tables: Map<string, string[]>; keys: KeyRow[]; foreign: ForeignRow[] }> {
  const columns = await db.query<{ table: string; columns: string[] }>(
    `SELECT c.relname AS table, array_agg(a.attname::text ORDER BY a.attnum) AS columns
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') GROUP BY c.relname`, [schema]);
  const keys = await db.query<KeyRow>(
    `SELECT c.relname AS table, i.indisprimary AS primary,
            array(SELECT a.attname::text FROM unnest(i.indkey) WITH ORDINALITY k(attnum, ord)
                    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum ORDER BY k.ord) AS columns
       FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND i.indisunique`, [schema]);
  const foreign = await db.query<ForeignRow>(
    `SELECT c.relname AS table, t.relname AS target,
            array(SELECT a.attname::text FROM unnest(f.conkey) WITH ORDINALITY k(attnum, ord)
                    JOIN pg_attribute a ON a.attrelid = f.conrelid AND a.attnum = k.attnum ORDER BY k.ord) AS columns,
            array(SELECT a.attname::text FROM unnest(f.confkey) WITH ORDINALITY k(attnum, ord)
                    JOIN pg_attribute a ON a.attrelid = f.confrelid AND a.attnum = k.attnum ORDER BY k.ord) AS "targetColumns"
       FROM pg_constraint f JOIN pg_class c ON c.oid = f.conrelid JOIN pg_class t ON t.oid = f.confrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND f.contype = 'f'`, [schema]);
  return { tables: new Map(columns.rows.map((r) => [r.table, r.columns])), keys: keys.rows, foreign: foreign.rows };
}

/** Every key of the schema that would keep it from being distributed by tenant, as a sentence each. */
function distributionFindings(schema: Awaited<ReturnType<typeof schemaOf>>): string[] {
  const distributed = (table: string) => notDistributed[table] === undefined;
  const findings: string[] = [];
  for (const [table, columns] of schema.tables) {
    if (distributed(table) && !columns.includes("tenant_id")) findings.push(`${table}: no tenant_id`);
  }
  for (const key of schema.keys) {
    if (!distributed(key.table) || !schema.tables.get(key.table)?.includes("tenant_id")) continue;
    const list = `(${key.columns.join(", ")})`;
    if (key.primary && key.columns[0] !== "tenant_id") findings.push(`${key.table}: primary key ${list}`);
    else if (!key.primary && !key.columns.includes("tenant_id")) findings.push(`${key.table}: unique key ${list}`);
  }
  for (const fk of schema.foreign) {
    if (!distributed(fk.table) || !distributed(fk.target)) continue;   // a reference table may be referenced by anything
    const paired = fk.columns.some((column, i) => column === "tenant_id" && fk.targetColumns[i] === "tenant_id");
    if (!paired) findings.push(`${fk.table}: foreign key (${fk.columns.join(", ")}) -> ${fk.target} (${fk.targetColumns.join(", ")})`);
  }
  return findings.sort();
}

describe("the migrated schema, distributed by tenant", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("keys every tenant-scoped table by tenant_id, apart from the known violations", async () => {
    const findings = distributionFindings(await schemaOf(db.pool, "public"));
    expect(findings.filter((finding) => knownViolations[finding] === undefined)).toEqual([]);
  });

  it("keeps no known violation that is fixed, and no table listed apart that is gone", async () => {
    const schema = await schemaOf(db.pool, "public");
    const findings = distributionFindings(schema);
    expect(Object.keys(knownViolations).filter((violation) => !findings.includes(violation))).toEqual([]);
    expect(Object.keys(notDistributed).filter((table) => !schema.tables.has(table))).toEqual([]);
  });

  it("names a tenant-scoped table whose primary or unique key lacks tenant_id, or whose foreign key does not join on it", async () => {
    await db.pool.query("CREATE SCHEMA fixture");
    await db.pool.query("CREATE TABLE fixture.good (tenant_id text, id text, code text, PRIMARY KEY (tenant_id, id), UNIQUE (tenant_id, code))");
    await db.pool.query("CREATE TABLE fixture.bad_primary (tenant_id text, id text PRIMARY KEY)");
    await db.pool.query("CREATE TABLE fixture.bad_unique (tenant_id text, id text, code text UNIQUE, PRIMARY KEY (tenant_id, id))");
    await db.pool.query("CREATE TABLE fixture.bad_foreign (tenant_id text, id text, good_id text, PRIMARY KEY (tenant_id, id))");
    await db.pool.query("CREATE UNIQUE INDEX ON fixture.good (id)");
    await db.pool.query("ALTER TABLE fixture.bad_foreign ADD FOREIGN KEY (good_id) REFERENCES fixture.good (id)");
    await db.pool.query("CREATE TABLE fixture.no_tenant (id text PRIMARY KEY)");
    expect(distributionFindings(await schemaOf(db.pool, "fixture"))).toEqual([
      "bad_foreign: foreign key (good_id) -> good (id)",
      "bad_primary: primary key (id)",
      "bad_unique: unique key (code)",
      "good: unique key (id)",
      "no_tenant: no tenant_id",
    ]);
  });
});
