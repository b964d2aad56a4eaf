import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import type { Room } from "./import-graph.ts";
import { roomsTable, tableOwners } from "./rooms.ts";
import {
  checkOwnersCoverSchema, checkTableOwners, sqlNames, type AllowedTableUse, type TableUse,
} from "./table-owners.ts";

/**
 * SQL that names another room's table, kept with the reason (docs/decisions/0069). Each is one
 * set-based statement that joins across rooms for speed, or a read by a room below the owner (which
 * cannot import it). An entry that matches no use any more fails, so the list only shrinks.
 */
const allowedUses: AllowedTableUse[] = [
  ...uses("src/incidents/perimeter.ts", [
    "received_file", "record_key", "iso8583_inbound", "iso8583_inbound_reversal", "payment",
    "transfer",
  ], "the incident perimeter reads every channel's store (payments, card messages, file records) "
      + "in one windowed query (0015)"),
  ...uses("src/recon/set-matching.ts", [
    "compensation", "record_key", "payment", "settlement_transfer_net", "transfer",
  ], "the reconciliation run matches our side by the references of each transfer's record in one "
      + "set-based statement (0036, 0049, 0050)"),
  ...uses("src/recon/sides.ts", ["record_key", "payment"],
    "our side of a reconciliation reads each transfer's record references with the ledger entries "
      + "in one statement (0036)"),
  // Moved into the store once, the query ran past the statement timeout in the kill test under
  // CI load: as one correlated subquery of the UPDATE that finishes the file it is planned with
  // that row, and it passes.
  ...uses("src/files/pipeline.ts", ["record_outcome", "record_key"],
    "finishing a file names the file it corrects inside the UPDATE that finishes it"),
  ...uses("src/records/store/keys.ts", ["account"],
    "the key claim checks each named account (exists, in the leg's currency) in the statement "
      + "that claims the keys (0042)"),
  ...uses("src/records/store/undos.ts", ["ledger_entry"],
    "the originals' legs are read in the statement that locks their marks, one round trip per "
      + "batch of undos (0038, 0042)"),
  ...uses("src/cards/cards.ts", ["account"],
    "a batch of card originals reads each card's account and its currency in one probe per card "
      + "(0045, 0052)"),
  ...uses("src/partners/partners.ts", ["account"],
    "the counterparties of a chunk resolve alias, account and currency in one read "
      + "(records/stages/counterparties.ts)"),
  ...uses("src/idempotency/records.ts", ["dedup_event"],
    "the replay lookup of concurrent requests writes their dedup records in the same statement "
      + "(0005, 0054)"),
  // The record core sits below the file service (files -> records): it cannot ask files/.
  ...uses("src/records/store/keys.ts", ["received_file"],
    "a conflict's detail names the file that first used the key, read with the keys"),
  ...uses("src/records/store/history.ts", ["received_file"],
    "a record's history names the file of each arrival in the statement that reads the arrivals"),
  ...uses("src/records/store/reviews.ts", ["received_file"],
    "a review item shows the other file behind a conflict or suspect, read with the items"),
];

function uses(file: string, tables: readonly string[], why: string): AllowedTableUse[] {
  return tables.map((table) => ({ file, table, why }));
}

const root = path.resolve(import.meta.dirname, "../..");

function sourceFiles(folder: string): string[] {
  return readdirSync(path.join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(relative);
    return relative.endsWith(".ts") ? [relative] : [];
  });
}

const tableUses: TableUse[] = sourceFiles("src").flatMap((file) =>
  sqlNames(readFileSync(path.join(root, file), "utf8"))
    .filter((name) => tableOwners[name] !== undefined)
    .map((table) => ({ file, table })));

describe("the owner of every table", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ poolMax: 1 });
  });
  afterAll(async () => {
    await db.drop();
  });

  it("is named for every table of the migrated schema, and for no table that is gone", async () => {
    const { rows } = await db.pool.query<{ table_name: string }>(
      `SELECT table_name
         FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
        ORDER BY table_name`);
    expect(checkOwnersCoverSchema(rows.map((r) => r.table_name), tableOwners)).toEqual([]);
  });

  it("is the only room whose SQL names the table, but for the listed uses", () => {
    expect(checkTableOwners(tableUses, tableOwners, roomsTable, allowedUses)).toEqual([]);
  });
});

describe("the table owner checker", () => {
  const house: Room[] = [
    { name: "http", layer: "adapter", paths: ["http/"] },
    { name: "billing", layer: "service", paths: ["billing/"] },
    { name: "ledger", layer: "core", paths: ["ledger/"] },
  ];
  const owners = { invoice: "billing", entry: "ledger" };

  it("finds table names in SQL strings and templates, never in comments or code", () => {
    const source = [
      `// SELECT 1 FROM commented`,
      `const a = "SELECT 1 FROM invoice i JOIN entry e ON true";`,
      "const b = `INSERT INTO invoice SELECT * FROM ${from} f WHERE x IN (SELECT 1 FROM entry)`;",
      `const c = "DELETE FROM  refund"; const d = 'UPDATE statement SET a = 1';`,
      `const e = "lock TABLE ONLY ledger_row"; const FROM = 1; const f = "from prose";`,
    ].join("\n");
    expect(sqlNames(source)).toEqual(["entry", "invoice", "ledger_row", "refund", "statement"]);
  });

  it("reports SQL that names another room's table, even an adapter's", () => {
    const found: TableUse[] = [
      { file: "src/billing/invoices.ts", table: "invoice" },
      { file: "src/billing/invoices.ts", table: "entry" },
      { file: "src/http/route.ts", table: "invoice" },
    ];
    expect(checkTableOwners(found, owners, house)).toEqual([
      "src/billing/invoices.ts names entry, a table of ledger: ask its front door",
      "src/http/route.ts names invoice, a table of billing: ask its front door",
    ]);
  });

  it("lets an allowed use pass, and reports an allowance that matches no use", () => {
    const found: TableUse[] = [{ file: "src/billing/invoices.ts", table: "entry" }];
    const allowed: AllowedTableUse[] = [
      { file: "src/billing/invoices.ts", table: "entry", why: "one statement" },
      { file: "src/billing/gone.ts", table: "entry", why: "moved" },
      { file: "src/ledger/post.ts", table: "entry", why: "its own" },
    ];
    expect(checkTableOwners(found, owners, house, allowed)).toEqual([
      "allowed table use no longer exists, remove the allowance: src/billing/gone.ts names entry",
      "allowed table use no longer exists, remove the allowance: src/ledger/post.ts names entry",
    ]);
  });

  it("reports an owner that is no room", () => {
    expect(checkTableOwners([], { invoice: "invoicing" }, house)).toEqual([
      "the owner of invoice, invoicing, is no room",
    ]);
  });

  it("reports a table of the schema without an owner, and an owner of a table that is gone", () => {
    expect(checkOwnersCoverSchema(["invoice", "payout"], owners)).toEqual([
      "payout has no owning room: add it to the owners table",
      "entry is owned but is no table of the schema: remove it",
    ]);
  });
});
