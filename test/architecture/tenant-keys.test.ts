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
  tenant: {
    kind: "reference",
    why: "every request finds its tenant by API key hash before it knows it; small, read always",
  },
  api_key: {
    kind: "reference",
    why: "a request finds its key by hash before it knows its tenant (as tenant: small, read always)",
  },
  card_issuer_bin: {
    kind: "reference",
    why: "a card message is routed to the tenant issuing its BIN before the tenant is known",
  },
  schema_migration: { kind: "coordinator", why: "the schema's own bookkeeping" },
  fleet_lease: {
    kind: "coordinator",
    why: "which serve process runs which source, job and scheme link: the fleet's (decision 0072)",
  },
  fleet_job_run: { kind: "coordinator", why: "the periods of the fleet's singleton jobs (0072)" },
  iso8583_stan_counter: {
    kind: "coordinator", why: "the STAN counter of an outbound scheme connection, for every tenant",
  },
};

/**
 * Keys that break the rule today, each with the change that would end it. An entry that no longer
 * breaks the rule fails the test until it is removed: the list only shrinks.
 */
const knownViolations: Record<string, string> = {
  "operator: primary key (operator_id)":
    "key operator by (tenant_id, operator_id); sessions and proposals then name the tenant too",
  "decision_proposal: foreign key (proposed_by) -> operator (operator_id)": "follows operator",
  "decision_proposal: foreign key (approved_by) -> operator (operator_id)": "follows operator",
  "decision_proposal: foreign key (cancelled_by) -> operator (operator_id)": "follows operator",
  "operator_session: no tenant_id":
    "a session is found by its cookie's hash alone; the cookie would carry the tenant",
  "operator_session: foreign key (operator_id) -> operator (operator_id)": "follows the two above",
};

interface KeyRow { table: string; primary: boolean; columns: string[] }
interface ForeignRow { table: string; columns: string[]; target: string; targetColumns: string[] }
interface Schema { tables: Map<string, string[]>; keys: KeyRow[]; foreign: ForeignRow[] }

/** The names of an index's or constraint's columns, in order (`array` is int2vector or int2[]). */
const columnNames = (array: string, relation: string) => `array(
  SELECT a.attname::text FROM unnest(${array}) WITH ORDINALITY k(attnum, ord)
    JOIN pg_attribute a ON a.attrelid = ${relation} AND a.attnum = k.attnum ORDER BY k.ord)`;

async function schemaOf(db: Queryable, schema: string): Promise<Schema> {
  const columns = await db.query<{ table: string; columns: string[] }>(
    `SELECT c.relname AS table, array_agg(a.attname::text ORDER BY a.attnum) AS columns
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') GROUP BY c.relname`, [schema]);
  const keys = await db.query<KeyRow>(
    `SELECT c.relname AS table, i.indisprimary AS primary,
            ${columnNames("i.indkey", "c.oid")} AS columns
       FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND i.indisunique`, [schema]);
  const foreign = await db.query<ForeignRow>(
    `SELECT c.relname AS table, t.relname AS target,
            ${columnNames("f.conkey", "f.conrelid")} AS columns,
            ${columnNames("f.confkey", "f.confrelid")} AS "targetColumns"
       FROM pg_constraint f JOIN pg_class c ON c.oid = f.conrelid
       JOIN pg_class t ON t.oid = f.confrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND f.contype = 'f'`, [schema]);
  const tables = new Map(columns.rows.map((r) => [r.table, r.columns]));
  return { tables, keys: keys.rows, foreign: foreign.rows };
}

const distributed = (table: string) => notDistributed[table] === undefined;

function keyFindings(schema: Schema): string[] {
  const findings: string[] = [];
  for (const key of schema.keys) {
    if (!distributed(key.table) || !schema.tables.get(key.table)?.includes("tenant_id")) continue;
    const list = `(${key.columns.join(", ")})`;
    if (key.primary && key.columns[0] !== "tenant_id") {
      findings.push(`${key.table}: primary key ${list}`);
    } else if (!key.primary && !key.columns.includes("tenant_id")) {
      findings.push(`${key.table}: unique key ${list}`);
    }
  }
  return findings;
}

function foreignKeyFindings(schema: Schema): string[] {
  const findings: string[] = [];
  for (const fk of schema.foreign) {
    // A reference table may be referenced by anything.
    if (!distributed(fk.table) || !distributed(fk.target)) continue;
    const paired = fk.columns
      .some((column, i) => column === "tenant_id" && fk.targetColumns[i] === "tenant_id");
    if (paired) continue;
    const from = fk.columns.join(", ");
    const to = fk.targetColumns.join(", ");
    findings.push(`${fk.table}: foreign key (${from}) -> ${fk.target} (${to})`);
  }
  return findings;
}

/** Every key of the schema that would keep it from being distributed by tenant, a sentence each. */
function distributionFindings(schema: Schema): string[] {
  const untenanted = [...schema.tables]
    .filter(([table, columns]) => distributed(table) && !columns.includes("tenant_id"))
    .map(([table]) => `${table}: no tenant_id`);
  return [...untenanted, ...keyFindings(schema), ...foreignKeyFindings(schema)].sort();
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
    const fixed = Object.keys(knownViolations).filter((violation) => !findings.includes(violation));
    expect(fixed).toEqual([]);
    expect(Object.keys(notDistributed).filter((table) => !schema.tables.has(table))).toEqual([]);
  });

  it("names a tenant-scoped table with a primary or unique key without tenant_id, or a foreign key",
    async () => {
    await db.pool.query("CREATE SCHEMA fixture");
    for (const statement of [
      "CREATE TABLE fixture.good (tenant_id text, id text, code text, PRIMARY KEY (tenant_id, id), "
        + "UNIQUE (tenant_id, code))",
      "CREATE TABLE fixture.bad_primary (tenant_id text, id text PRIMARY KEY)",
      "CREATE TABLE fixture.bad_unique (tenant_id text, id text, code text UNIQUE, "
        + "PRIMARY KEY (tenant_id, id))",
      "CREATE TABLE fixture.bad_foreign (tenant_id text, id text, good_id text, "
        + "PRIMARY KEY (tenant_id, id))",
      "CREATE UNIQUE INDEX ON fixture.good (id)",
      "ALTER TABLE fixture.bad_foreign ADD FOREIGN KEY (good_id) REFERENCES fixture.good (id)",
      "CREATE TABLE fixture.no_tenant (id text PRIMARY KEY)",
    ]) await db.pool.query(statement);
    expect(distributionFindings(await schemaOf(db.pool, "fixture"))).toEqual([
      "bad_foreign: foreign key (good_id) -> good (id)",
      "bad_primary: primary key (id)",
      "bad_unique: unique key (code)",
      "good: unique key (id)",
      "no_tenant: no tenant_id",
    ]);
  });
});
