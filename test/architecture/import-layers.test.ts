import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  checkEntriesAndBans, checkImportGraph, importedNames, importSpecifiers, packageOf, resolveImport,
  typeOnlySpecifiers, withIndexEntries,
  type AllowedImport, type ImportBan, type ImportEdge, type Room,
} from "./import-graph.ts";
import { roomsTable } from "./rooms.ts";

/**
 * Imports that break the rules today from files the record core work is rewriting (issue 11
 * item 1); each one goes with that work, and an entry that matches no import any more fails the
 * test until it is removed.
 */
const allowedDuringMove: AllowedImport[] = [
];

/**
 * What adapters may not import (docs/decisions/0056, 0069): they translate, and reach the
 * database, the ledger and the record core through services. Measured before the rules were
 * written: no adapter imports pg; api/ and sources/ import from db/ only the Pool or Queryable
 * type they pass to services (and the type of a list's page and place, src/db/list-place.ts),
 * and api/ the test of a failure's kind (503 or 500); none reads
 * records/store/. api/ shows accounts, balances and statements and opens accounts: it may name
 * those of the ledger's front door, never a posting.
 */
const adapters = roomsTable.filter((room) => room.layer === "adapter").map((room) => room.name);
const ledgerReadSide = [
  "accountKinds", "accountsPage", "accountStatement", "balanceOf", "listAccounts", "openAccount",
  "projectionLag",
  "statementDocument", "Account", "AccountKind", "Balance",
  // balances on a date (docs/decisions/0102): reads, like balanceOf
  "asOfDateOf", "balanceOfKind", "balancesOnDate", "BalanceKind",
  // the transfers, a page at a time or one by key (issue 33 item 7): reads of what was posted
  "findTransfer", "transfersPage", "ShownTransfer",
  // the suspense balance per day, for the console's pictures (issue 33 item 4): a read
  "suspenseBalancePerDay", "SuspenseBalanceOfDay",
  // a statement with the balance after each line, read in one snapshot (issue 33): a read
  "statementWithRunningBalance",
];
const bans: ImportBan[] = [
  { rooms: adapters, target: "pg", why: "the database driver is db/'s" },
  {
    rooms: adapters, target: "db/", except: ["db/failure-kind.ts"],
    typesFrom: ["db/pool.ts", "db/list-place.ts"],
    why: "an adapter passes a handle through, it opens no transaction",
  },
  { rooms: adapters, target: "records/store/", why: "the record core's store is private" },
  { rooms: ["gateway", "sources"], target: "ledger/", why: "balances and postings are a service's" },
  {
    rooms: ["api"], target: "ledger/", exceptNames: ledgerReadSide,
    why: "api shows accounts, balances and statements; posting is a service's",
  },
];

const root = path.resolve(import.meta.dirname, "../..");

function sourceFiles(folder: string): string[] {
  return readdirSync(path.join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(relative);
    return entry.name.endsWith(".ts") ? [relative] : [];
  });
}

const files = sourceFiles("src");
const rooms = withIndexEntries(roomsTable, files);
const imports: ImportEdge[] = files.flatMap((from) => {
  const text = readFileSync(path.join(root, from), "utf8");
  const typeOnly = typeOnlySpecifiers(text);
  const names = importedNames(text);
  return importSpecifiers(text).flatMap((specifier) => {
    const to = resolveImport(from, specifier) ?? packageOf(specifier);
    if (to === undefined) return [];
    return [{ from, to, typeOnly: typeOnly.has(specifier), names: names.get(specifier) ?? [] }];
  });
});

describe("the import graph of src/", () => {
  it("holds the rooms' layers, keeps adapters apart and has no cycle", () => {
    expect(checkImportGraph(files, imports, rooms, allowedDuringMove)).toEqual([]);
  });

  it("enters a room with an entry only through it, and no adapter imports what it is banned", () => {
    expect(checkEntriesAndBans(imports, rooms, bans)).toEqual([]);
  });

  it("enters the record core, the ledger and the card messages through their index.ts", () => {
    const entries = rooms.filter((room) => room.entry !== undefined).map((room) => room.entry);
    expect(entries).toEqual(
      expect.arrayContaining(["cards/index.ts", "records/index.ts", "ledger/index.ts"]));
  });

  // The real table, fed imports that must fail (issue 28): each rule of the table shows it holds.
  const checkReal = (from: string, to: string, names?: string[]) => [
    ...checkImportGraph([from, to], [{ from, to }], rooms),
    ...checkEntriesAndBans([{ from, to, ...(names ? { names } : {}) }], rooms, bans),
  ];

  it("reports a climb inside the core layer: db/ importing normalize/", () => {
    expect(checkReal("src/db/pool.ts", "src/normalize/fingerprint.ts")).toEqual([
      "climb inside the core layer, db -> normalize (listed above it): "
        + "src/db/pool.ts imports src/normalize/fingerprint.ts",
    ]);
  });

  it("reports a climb inside the service layer: records/ importing recon/", () => {
    expect(checkReal("src/records/decide-records.ts", "src/recon/sides.ts")).toEqual([
      "climb inside the service layer, records -> recon (listed above it): "
        + "src/records/decide-records.ts imports src/recon/sides.ts",
    ]);
  });

  it("reports an import of the record core's or the ledger's files past their front doors", () => {
    expect([
      ...checkReal("src/files/report.ts", "src/records/store/arrivals.ts"),
      ...checkReal("src/recon/runs.ts", "src/ledger/accounts.ts"),
    ]).toEqual([
      "import past the entry of records (src/records/index.ts): "
        + "src/files/report.ts imports src/records/store/arrivals.ts",
      "import past the entry of ledger (src/ledger/index.ts): "
        + "src/recon/runs.ts imports src/ledger/accounts.ts",
    ]);
  });

  it("lets api/ read balances and statements through the ledger's front door, never post", () => {
    const route = "src/api/routes/accounts.ts";
    expect([
      ...checkReal(route, "src/ledger/index.ts", ["balanceOf", "accountStatement"]),
      ...checkReal(route, "src/ledger/index.ts", ["balanceOf", "postTransfer"]),
    ]).toEqual([
      "banned import, api -> ledger/ "
        + "(api shows accounts, balances and statements; posting is a service's): "
        + "src/api/routes/accounts.ts imports src/ledger/index.ts",
    ]);
  });
});

describe("the import checker", () => {
  // A small house of its own: one room per layer, two adapters, two services.
  const house: Room[] = [
    { name: "root", layer: "composition", paths: ["main.ts"] },
    { name: "http", layer: "adapter", paths: ["http/"] },
    { name: "tcp", layer: "adapter", paths: ["tcp/"] },
    { name: "billing", layer: "service", paths: ["billing/"] },
    { name: "shipping", layer: "service", paths: ["shipping/"] },
    { name: "base", layer: "core", paths: ["base/"] },
    { name: "limits", layer: "core", paths: ["base/limits.ts"] },
  ];
  const check = (edges: Array<[string, string]>, allowed: AllowedImport[] = []) => {
    const graph = edges.map(([from, to]) => ({ from: `src/${from}`, to: `src/${to}` }));
    const names = [...new Set(graph.flatMap((e) => [e.from, e.to]))];
    return checkImportGraph(names, graph, house, allowed);
  };

  it("passes a graph whose imports all run down the layers", () => {
    expect(check([["main.ts", "http/server.ts"], ["http/server.ts", "billing/bill.ts"], ["billing/bill.ts", "shipping/ship.ts"], ["shipping/ship.ts", "base/limits.ts"]])).toEqual([]);
  });

  it("reports a lower layer importing a higher one", () => {
    expect(check([["base/money.ts", "billing/bill.ts"]])).toEqual(["upward import, core base -> service billing: src/base/money.ts imports src/billing/bill.ts"]);
  });

  it("reports an adapter importing another adapter", () => {
    expect(check([["http/route.ts", "tcp/session.ts"]])).toEqual(["adapter imports adapter, http -> tcp: src/http/route.ts imports src/tcp/session.ts"]);
  });

  it("reports a room importing one listed above it in its layer", () => {
    const climbs = check([
      ["shipping/ship.ts", "billing/bill.ts"], ["base/limits.ts", "base/money.ts"],
    ]);
    expect(climbs).toEqual([
      "climb inside the service layer, shipping -> billing (listed above it): "
        + "src/shipping/ship.ts imports src/billing/bill.ts",
      "climb inside the core layer, limits -> base (listed above it): "
        + "src/base/limits.ts imports src/base/money.ts",
    ]);
  });

  it("reports a cycle between rooms with the import behind each step", () => {
    expect(check([["billing/bill.ts", "shipping/ship.ts"], ["shipping/label.ts", "billing/price.ts"]])).toEqual([
      "climb inside the service layer, shipping -> billing (listed above it): "
        + "src/shipping/label.ts imports src/billing/price.ts",
      "cycle between rooms: billing -> shipping (src/billing/bill.ts imports src/shipping/ship.ts) -> billing (src/shipping/label.ts imports src/billing/price.ts)",
    ]);
  });

  it("reports a cycle between files of one room as its path", () => {
    expect(check([["billing/a.ts", "billing/b.ts"], ["billing/b.ts", "billing/c.ts"], ["billing/c.ts", "billing/a.ts"]])).toEqual([
      "cycle between files: src/billing/a.ts -> src/billing/b.ts -> src/billing/c.ts -> src/billing/a.ts",
    ]);
  });

  it("places a file by its longest matching path, so a room can sit inside another's folder", () => {
    // base/limits.ts is the limits room: base -> limits -> base is a cycle between rooms.
    expect(check([["base/config.ts", "base/limits.ts"], ["base/limits.ts", "base/assert.ts"]])).toEqual([
      "climb inside the core layer, limits -> base (listed above it): "
        + "src/base/limits.ts imports src/base/assert.ts",
      "cycle between rooms: base -> limits (src/base/config.ts imports src/base/limits.ts) -> base (src/base/limits.ts imports src/base/assert.ts)",
    ]);
  });

  it("reports a file that is in no room", () => {
    expect(check([["billing/bill.ts", "reports/monthly.ts"]])).toEqual(["src/reports/monthly.ts is in no room: add its folder to the rooms table"]);
  });

  it("lets an allowed import pass, and reports an allowance that matches no import", () => {
    const allowed = [{ from: "src/base/money.ts", to: "src/billing/bill.ts", why: "moving" }, { from: "src/base/gone.ts", to: "src/billing/bill.ts", why: "moved" }];
    expect(check([["base/money.ts", "billing/bill.ts"]], allowed)).toEqual(["allowed import no longer exists, remove the allowance: src/base/gone.ts imports src/billing/bill.ts"]);
  });

  it("reads static, re-exported, side-effect, dynamic and type imports, and none from comments or strings", () => {
    const source = [
      `import type { A } from "./a.ts";`,
      `import {\n  B,\n} from "../b.ts";`,
      `export { C } from "./c.ts";`,
      `import "./d.ts";`,
      `const e = async () => (await import("./e.ts")).e;`,
      `// import { F } from "./commented.ts";`,
      `const text = 'import("./quoted.ts")';`,
    ].join("\n");
    expect(importSpecifiers(source)).toEqual(["./a.ts", "../b.ts", "./c.ts", "./d.ts", "./e.ts"]);
  });

  describe("entries and bans", () => {
    // The small house again, with a front door for billing and the adapters' bans of the real table.
    const withEntry = house.map((room) => (room.name === "billing" ? { ...room, entry: "billing/index.ts" } : room));
    const houseBans: ImportBan[] = [
      { rooms: ["http", "tcp"], target: "pg", why: "driver" },
      { rooms: ["http", "tcp"], target: "base/db/", except: ["base/db/failure.ts"], typesFrom: ["base/db/pool.ts"], why: "handles only" },
      { rooms: ["http", "tcp"], target: "billing/store/", why: "private store" },
      { rooms: ["tcp"], target: "base/ledger/", why: "services post" },
    ];
    const checkRules = (edges: ImportEdge[], bans = houseBans) =>
      checkEntriesAndBans(edges.map((e) => ({ ...e, from: `src/${e.from}`, to: e.to.endsWith(".ts") ? `src/${e.to}` : e.to })), withEntry, bans);

    it("reports an adapter that imports the driver, opens a transaction or reads a private store, and lets a handle's type pass", () => {
      expect(checkRules([
        { from: "tcp/link.ts", to: "pg" },
        { from: "tcp/link.ts", to: "base/db/tx.ts" },
        { from: "tcp/link.ts", to: "base/db/pool.ts" },
        { from: "tcp/link.ts", to: "billing/store/rows.ts" },
        { from: "tcp/link.ts", to: "base/ledger/balance.ts" },
        { from: "tcp/link.ts", to: "base/db/pool.ts", typeOnly: true },
        { from: "http/route.ts", to: "base/db/failure.ts" },
        { from: "http/route.ts", to: "base/ledger/balance.ts" },
        { from: "billing/charge.ts", to: "base/db/tx.ts" },
      ])).toEqual([
        "banned import, tcp -> pg (driver): src/tcp/link.ts imports pg",
        "banned import, tcp -> base/db/ (handles only): src/tcp/link.ts imports src/base/db/tx.ts",
        "banned import, tcp -> base/db/ (handles only): src/tcp/link.ts imports src/base/db/pool.ts",
        "import past the entry of billing (src/billing/index.ts): src/tcp/link.ts imports src/billing/store/rows.ts",
        "banned import, tcp -> billing/store/ (private store): src/tcp/link.ts imports src/billing/store/rows.ts",
        "banned import, tcp -> base/ledger/ (services post): src/tcp/link.ts imports src/base/ledger/balance.ts",
      ]);
    });

    it("reports an import past a room's entry from another room, and lets the entry and the room's own files pass", () => {
      expect(checkRules([
        { from: "http/route.ts", to: "billing/index.ts" },
        { from: "main.ts", to: "billing/invoice.ts" },
        { from: "billing/index.ts", to: "billing/invoice.ts" },
      ])).toEqual(["import past the entry of billing (src/billing/index.ts): src/main.ts imports src/billing/invoice.ts"]);
    });

    it("lets an import pass a ban that names only the names it excepts", () => {
      const readSide: ImportBan = {
        rooms: ["http"], target: "base/ledger/", exceptNames: ["balanceOf"], why: "reads only",
      };
      expect(checkRules([
        { from: "http/route.ts", to: "base/ledger/index.ts", names: ["balanceOf"] },
        { from: "http/route.ts", to: "base/ledger/index.ts", names: ["balanceOf", "post"] },
        { from: "http/route.ts", to: "base/ledger/index.ts", names: ["*"] },
        { from: "http/route.ts", to: "base/ledger/index.ts" },
      ], [readSide])).toEqual([
        "banned import, http -> base/ledger/ (reads only): "
          + "src/http/route.ts imports src/base/ledger/index.ts",
        "banned import, http -> base/ledger/ (reads only): "
          + "src/http/route.ts imports src/base/ledger/index.ts",
        "banned import, http -> base/ledger/ (reads only): "
          + "src/http/route.ts imports src/base/ledger/index.ts",
      ]);
    });

    it("enters a folder room through its index.ts when it has one", () => {
      const files = [
        "src/billing/index.ts", "src/billing/bill.ts", "src/shipping/ship.ts", "src/base/index.ts",
      ];
      const entered = withIndexEntries(house, files).filter((room) => room.entry !== undefined);
      expect(entered.map((room) => [room.name, room.entry])).toEqual([
        ["billing", "billing/index.ts"], ["base", "base/index.ts"],
      ]);
    });

    it("reports a ban that names no room", () => {
      expect(checkRules([], [{ rooms: ["smtp"], target: "pg", why: "driver" }])).toEqual(["an import ban names smtp, which is no room"]);
    });
  });

  it("tells imports for types only from imports that load a module", () => {
    const source = [
      `import type { Pool } from "./pool.ts";`,
      `import { type Tx } from "./tx.ts";`,
      `import type { A } from "./both.ts";`,
      `import { b } from "./both.ts";`,
      `export type { C } from "./c.ts";`,
      `type D = typeof import("./d.ts");`,
      `const e = async () => (await import("./e.ts")).e;`,
    ].join("\n");
    expect([...typeOnlySpecifiers(source)].sort()).toEqual(["./c.ts", "./d.ts", "./pool.ts"]);
  });

  it("reads the names each import takes, as its module exports them", () => {
    const source = [
      `import { a, b as c, type D } from "./one.ts";`,
      `import type { E } from "./one.ts";`,
      `import F, * as G from "./two.ts";`,
      `export { h as i } from "./three.ts";`,
      `export * from "./four.ts";`,
      `import "./five.ts";`,
      `const j = async () => (await import("./six.ts")).j;`,
    ].join("\n");
    expect(Object.fromEntries(importedNames(source))).toEqual({
      "./one.ts": ["a", "b", "D", "E"], "./two.ts": ["default", "*"], "./three.ts": ["h"],
      "./four.ts": ["*"], "./five.ts": [], "./six.ts": ["*"],
    });
  });

  it("names the package of a bare specifier", () => {
    expect(["pg", "pg/lib/client", "@nats-io/jetstream", "node:net", "./local.ts"].map(packageOf))
      .toEqual(["pg", "pg", "@nats-io/jetstream", "node:net", undefined]);
  });

  it("resolves relative specifiers against the importing file and leaves packages out", () => {
    expect([resolveImport("src/files/pipeline.ts", "../records/decide-records.ts"), resolveImport("src/files/pipeline.ts", "pg"), resolveImport("src/files/pipeline.ts", "node:fs")])
      .toEqual(["src/records/decide-records.ts", undefined, undefined]);
  });
});
