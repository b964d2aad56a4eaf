import type { PoolClient } from "pg";
import { withTransaction } from "../src/db/transaction.ts";
import { openAccount } from "../src/ledger/accounts.ts";
import { postTransfers } from "../src/ledger/post-transfers.ts";
import type { Transfer } from "../src/ledger/transfer.ts";
import { alternate, roundsRow, type BenchReport, type BenchRow } from "./harness.ts";
import { benchDatabase } from "./support/database.ts";

const TRANSFERS_PER_ROUND = 20_000;
const TRANSFERS_PER_BATCH = 500;   // one transaction per batch, as an ingest chunk posts
const ROUNDS = 3;

/**
 * `npm run bench -- ledger-writes`: what each guarantee of the ledger tables costs
 * (docs/decisions/0030). The baseline is the raw minimum: the same two INSERT ... unnest
 * statements per batch into tables with primary keys only. Each other side is the same two
 * statements into a copy of the tables with some pieces added, or the real tables, or the real
 * posting path (postTransfers); every side alternates with the baseline, round by round.
 */
export async function run(): Promise<BenchReport> {
  const db = await benchDatabase(4);
  const client = await db.pool.connect();
  try {
    await givenAccounts(db.pool);
    await createScratchSchemas(client);
    let sequence = 0;
    const rawInto = (schema: string) => async (): Promise<number> => {
      const first = sequence;
      sequence += TRANSFERS_PER_ROUND;
      return timed(() => insertByHand(client, schema, first));
    };
    const sides: Array<[string, () => Promise<number>]> = [
      ["+ 2 secondary indexes", rawInto("with_indexes")],
      ["+ balance delta rows (statement trigger, 0005)", rawInto("with_deltas")],
      ["+ statement checks, settlement nets (0022) and has-entries at commit (0009): the real design", rawInto("lean")],
      ["previous design: per-row entry trigger, 2 foreign keys, per-transfer check at commit", rawInto("previous")],
      ["real ledger tables, hand-written statements", rawInto("public")],
      ["postTransfers (the posting path), settlement to customer", async () => {
        const first = sequence;
        sequence += TRANSFERS_PER_ROUND;
        return timed(() => postByApplication(db.pool, first));
      }],
    ];
    const rows: BenchRow[] = [];
    for (const [name, side] of sides) {
      const rounds = await alternate(ROUNDS, rawInto("bare"), side);
      rows.push(roundsRow(name, "transfers/s", "same rows by hand into primary-key-only tables", rounds));
    }
    return { name: "ledger-writes", rows, notes: [`${TRANSFERS_PER_ROUND} transfers of 2 legs per round in batches of ${TRANSFERS_PER_BATCH}, one connection; ${process.env.DATABASE_URL ? "DATABASE_URL server" : "embedded PostgreSQL"}`] };
  } finally {
    client.release();
    await db.close();
  }
}

async function timed(work: () => Promise<void>): Promise<number> {
  const started = process.hrtime.bigint();
  await work();
  return TRANSFERS_PER_ROUND / (Number(process.hrtime.bigint() - started) / 1e9);
}

async function givenAccounts(pool: Parameters<typeof withTransaction>[0]): Promise<void> {
  await withTransaction(pool, async (tx) => {
    await openAccount(tx, { tenantId: "bench", accountId: "settlement", kind: "settlement", currency: "USD" });
    await openAccount(tx, { tenantId: "bench", accountId: "customer", kind: "customer", currency: "USD" });
  });
}

function keysOf(first: number, batch: number): string[] {
  return Array.from({ length: TRANSFERS_PER_BATCH }, (_, i) => `w:${first + batch * TRANSFERS_PER_BATCH + i}`);
}

/** The raw minimum per batch: BEGIN, one insert of transfers, one of entries, COMMIT. */
async function insertByHand(client: PoolClient, schema: string, first: number): Promise<void> {
  // The production trigger functions name their tables unqualified: they resolve to this schema's.
  await client.query(`SET search_path = ${schema}, public`);
  for (let batch = 0; batch < TRANSFERS_PER_ROUND / TRANSFERS_PER_BATCH; batch++) {
    const keys = keysOf(first, batch);
    await client.query("BEGIN");
    await client.query(`INSERT INTO ${schema}.transfer (tenant_id, transfer_key, kind, value_date) SELECT 'bench', k, 'payment', '2026-12-02' FROM unnest($1::text[]) k`, [keys]);
    await client.query(
      `INSERT INTO ${schema}.ledger_entry (tenant_id, entry_key, transfer_key, account_id, direction, amount_minor, currency, value_date)
       SELECT 'bench', k || side.n, k, side.account_id, side.direction, 100, 'USD', '2026-12-02'
         FROM unnest($1::text[]) k, (VALUES ('#0', 'settlement', 'D'), ('#1', 'customer', 'C')) AS side(n, account_id, direction)`,
      [keys],
    );
    await client.query("COMMIT");
  }
  await client.query("RESET search_path");
}

async function postByApplication(pool: Parameters<typeof withTransaction>[0], first: number): Promise<void> {
  for (let batch = 0; batch < TRANSFERS_PER_ROUND / TRANSFERS_PER_BATCH; batch++) {
    const transfers: Transfer[] = keysOf(first, batch).map((transferKey) => ({
      tenantId: "bench", transferKey, kind: "payment", valueDate: "2026-12-02",
      legs: [
        { accountId: "settlement", direction: "D", amountMinor: 100n, currency: "USD" },
        { accountId: "customer", direction: "C", amountMinor: 100n, currency: "USD" },
      ],
    }));
    const posted = await withTransaction(pool,
      (tx) => postTransfers(tx, transfers.map((transfer) => ({ transfer }))));
    if (posted.some(({ outcome: o }) => !o.ok || o.value !== "applied")) {
      throw new Error("every benchmark transfer must apply");
    }
  }
}

const TABLES = (schema: string) => `
  CREATE SCHEMA ${schema};
  CREATE TABLE ${schema}.transfer (LIKE public.transfer INCLUDING DEFAULTS INCLUDING CONSTRAINTS, PRIMARY KEY (tenant_id, transfer_key));
  CREATE TABLE ${schema}.ledger_entry (LIKE public.ledger_entry INCLUDING DEFAULTS INCLUDING CONSTRAINTS, PRIMARY KEY (tenant_id, entry_key));`;
const INDEXES = (schema: string) => `
  CREATE INDEX ON ${schema}.ledger_entry (tenant_id, transfer_key);
  CREATE INDEX ON ${schema}.ledger_entry (tenant_id, account_id, created_at);`;
const DELTAS = (schema: string) => `
  CREATE TABLE ${schema}.balance_delta (LIKE public.balance_delta INCLUDING ALL);
  CREATE FUNCTION ${schema}.deltas_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
    INSERT INTO ${schema}.balance_delta AS d (tenant_id, account_id, transfer_key, debits_minor, credits_minor)
    SELECT tenant_id, account_id, transfer_key, coalesce(sum(amount_minor) FILTER (WHERE direction = 'D'), 0), coalesce(sum(amount_minor) FILTER (WHERE direction = 'C'), 0)
      FROM new_entries GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (tenant_id, account_id, transfer_key) DO UPDATE SET debits_minor = d.debits_minor + excluded.debits_minor, credits_minor = d.credits_minor + excluded.credits_minor;
    RETURN NULL; END $$;
  CREATE TRIGGER deltas AFTER INSERT ON ${schema}.ledger_entry REFERENCING NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION ${schema}.deltas_only();`;

/**
 * Copies of the ledger tables with pieces added one at a time. `lean` runs the production trigger
 * functions of migrations 0009 and 0022 (their table names resolve through the search_path set per
 * schema); `previous` rebuilds 0001's per-row design for the side-by-side figure.
 */
async function createScratchSchemas(client: PoolClient): Promise<void> {
  await client.query(TABLES("bare"));
  await client.query(TABLES("with_indexes") + INDEXES("with_indexes"));
  await client.query(TABLES("with_deltas") + INDEXES("with_deltas") + DELTAS("with_deltas"));
  await client.query(TABLES("lean") + INDEXES("lean") + `
    CREATE TABLE lean.balance_delta (LIKE public.balance_delta INCLUDING ALL);
    CREATE TABLE lean.settlement_transfer_net (LIKE public.settlement_transfer_net INCLUDING ALL);
    CREATE TRIGGER after_insert AFTER INSERT ON lean.ledger_entry REFERENCING NEW TABLE AS new_entries
      FOR EACH STATEMENT EXECUTE FUNCTION public.ledger_entry_after_insert();
    CREATE CONSTRAINT TRIGGER has_entries AFTER INSERT ON lean.transfer DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW EXECUTE FUNCTION public.ledger_check_transfer_has_entries();`);
  await client.query(TABLES("previous") + INDEXES("previous") + DELTAS("previous") + `
    ALTER TABLE previous.ledger_entry ADD FOREIGN KEY (tenant_id, transfer_key) REFERENCES previous.transfer (tenant_id, transfer_key);
    ALTER TABLE previous.ledger_entry ADD FOREIGN KEY (tenant_id, account_id) REFERENCES public.account (tenant_id, account_id);
    CREATE FUNCTION previous.check_entry() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM previous.transfer WHERE tenant_id = NEW.tenant_id AND transfer_key = NEW.transfer_key AND xact_id = pg_current_xact_id()) THEN RAISE EXCEPTION 'foreign transfer'; END IF;
      IF NOT EXISTS (SELECT 1 FROM public.account WHERE tenant_id = NEW.tenant_id AND account_id = NEW.account_id AND currency = NEW.currency) THEN RAISE EXCEPTION 'currency'; END IF;
      RETURN NEW; END $$;
    CREATE TRIGGER check_entry BEFORE INSERT ON previous.ledger_entry FOR EACH ROW EXECUTE FUNCTION previous.check_entry();
    CREATE FUNCTION previous.check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$ DECLARE legs integer; bad text; BEGIN
      SELECT count(*) INTO legs FROM previous.ledger_entry WHERE tenant_id = NEW.tenant_id AND transfer_key = NEW.transfer_key;
      IF legs < 2 THEN RAISE EXCEPTION 'legs'; END IF;
      SELECT currency INTO bad FROM previous.ledger_entry WHERE tenant_id = NEW.tenant_id AND transfer_key = NEW.transfer_key GROUP BY currency
      HAVING sum(CASE direction WHEN 'D' THEN amount_minor ELSE 0 END) <> sum(CASE direction WHEN 'C' THEN amount_minor ELSE 0 END) LIMIT 1;
      IF bad IS NOT NULL THEN RAISE EXCEPTION 'unbalanced'; END IF;
      RETURN NULL; END $$;
    CREATE CONSTRAINT TRIGGER balanced AFTER INSERT ON previous.transfer DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION previous.check_balanced();`);
}
