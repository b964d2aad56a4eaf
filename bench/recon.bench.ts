import { withTransaction } from "../src/db/transaction.ts";
import { openAccount } from "../src/ledger/accounts.ts";
import { postTransfers } from "../src/ledger/post-transfers.ts";
import type { Transfer } from "../src/ledger/transfer.ts";
import { importExternalFile } from "../src/recon/external-items.ts";
import { runReconciliation } from "../src/recon/runs.ts";
import { alternate, peakRssMb, roundsRow, type BenchReport } from "./harness.ts";
import { benchDatabase, type BenchDatabase } from "./support/database.ts";

const DEFAULT_ENTRIES = 100_000;
const ROUNDS = 3;
const POST_BATCH = 5_000;
const DAY = "2026-12-01";

function decimal(minor: number): string {
  return `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, "0")}`;
}

/** A camt.053 with one credit per transfer, its EndToEndId the transfer's key. */
function statementOf(entries: number): Buffer {
  const parts: string[] = [`<?xml version="1.0" encoding="UTF-8"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>`,
    `<GrpHdr><MsgId>BENCH</MsgId><CreDtTm>${DAY}T18:00:00Z</CreDtTm></GrpHdr><Stmt><Id>BENCH-1</Id><Acct><Id><Othr><Id>1</Id></Othr></Id><Ccy>USD</Ccy></Acct>`];
  for (let i = 0; i < entries; i++) {
    parts.push(`<Ntry><Amt Ccy="USD">${decimal(100 + (i % 9_000))}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts><BookgDt><Dt>${DAY}</Dt></BookgDt>`
      + `<AcctSvcrRef>B${i}</AcctSvcrRef><NtryDtls><TxDtls><Refs><EndToEndId>W${i}</EndToEndId></Refs></TxDtls></NtryDtls></Ntry>`);
  }
  parts.push("</Stmt></BkToCstmrStmt></Document>");
  return Buffer.from(parts.join(""), "utf8");
}

async function givenLedger(db: BenchDatabase, tenantId: string, entries: number): Promise<void> {
  await openAccount(db.pool, { tenantId, accountId: "settlement", kind: "settlement", currency: "USD" });
  await openAccount(db.pool, { tenantId, accountId: "customers", kind: "clearing", currency: "USD" });
  for (let start = 0; start < entries; start += POST_BATCH) {
    const batch = Array.from({ length: Math.min(POST_BATCH, entries - start) }, (_, k): Transfer => {
      const i = start + k;
      const amountMinor = BigInt(100 + (i % 9_000));
      return { tenantId, transferKey: `W${i}`, kind: "payment", valueDate: DAY, legs: [
        { accountId: "settlement", direction: "D", amountMinor, currency: "USD" },
        { accountId: "customers", direction: "C", amountMinor, currency: "USD" },
      ] };
    });
    await withTransaction(db.pool, (tx) => postTransfers(tx, batch));
  }
}

/**
 * A reconciliation run (both sides loaded, matched by the rules) over a 100,000-entry statement
 * against 100,000 transfers, against the plain SQL join of the same rows on the same keys (their
 * EndToEndId = our transfer key, same amount), materialized as pairs. Alternated in rounds; the
 * run is a dry run (a stored run with the same inputs would be answered from storage).
 */
export async function run(args: string[]): Promise<BenchReport> {
  const entries = Number(args[0] ?? DEFAULT_ENTRIES);
  const db = await benchDatabase(8);
  try {
    const tenantId = "bench";
    await givenLedger(db, tenantId, entries);
    const imported = await importExternalFile(db.pool, { tenantId, accountId: "settlement", name: "bench.xml", content: statementOf(entries) });
    if (!imported.ok || imported.value.items !== entries) throw new Error(`import failed: ${JSON.stringify(imported)}`);
    await db.pool.query("ANALYZE");
    const timed = async (work: () => Promise<unknown>) => {
      const started = process.hrtime.bigint();
      await work();
      return entries / (Number(process.hrtime.bigint() - started) / 1e9);
    };
    const rounds = await alternate(ROUNDS,
      () => timed(async () => {
        const pairs = await db.pool.query(
          `SELECT i.item_key, e.transfer_key FROM recon_external_item i
             JOIN ledger_entry e ON e.tenant_id = i.tenant_id AND e.account_id = i.account_id
                                AND e.transfer_key = substr(i.refs[2], 5) AND e.amount_minor = i.amount_minor
            WHERE i.tenant_id = $1 AND i.account_id = 'settlement' AND i.booking_date = $2::date`,
          [tenantId, DAY],
        );
        if (pairs.rowCount !== entries) throw new Error(`the join paired ${pairs.rowCount} of ${entries}`);
      }),
      () => timed(async () => {
        const result = await runReconciliation(db.pool, { tenantId, accountId: "settlement", from: DAY, to: DAY, dryRun: true });
        if (!result.ok || result.value.matched !== entries) throw new Error(`run matched ${JSON.stringify(result)}`);
      }));
    const stored = await timed(async () => {
      const result = await runReconciliation(db.pool, { tenantId, accountId: "settlement", from: DAY, to: DAY });
      if (!result.ok || result.value.matched !== entries) throw new Error("stored run must match every entry");
    });
    return {
      name: "recon",
      rows: [
        roundsRow(`reconciliation run (dry), ${entries.toLocaleString("en-US")} entries each side`, "entries/s", "plain SQL join of the same rows", rounds, ">= 0.3"),
        { case: "reconciliation run, stored (results and differences written)", value: stored, unit: "entries/s", baseline: rounds.baseline[rounds.baseline.length - 1] ?? 0, baselineCase: "plain SQL join", ratio: stored / (rounds.baseline[rounds.baseline.length - 1] ?? 1) },
        { case: "peak RSS of the benchmark process (statement import, runs)", value: peakRssMb(), unit: "MB" },
      ],
      notes: [`${process.env.DATABASE_URL ? "DATABASE_URL server" : "embedded PostgreSQL"}; the statement is ${(statementOf(1).length * entries / 1e6).toFixed(0)} MB of camt.053`],
    };
  } finally {
    await db.close();
  }
}
