import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  checkEntriesAndBans, checkImportGraph, importSpecifiers, packageOf, resolveImport, typeOnlySpecifiers,
  type AllowedImport, type ImportBan, type ImportEdge, type Room,
} from "./import-graph.ts";

/**
 * The rooms of src/ and their layers (docs/decisions/0034). Composition roots may import
 * anything; adapters translate a channel and import services and core, never each other;
 * services hold the business and import core and other services (without cycles); core imports
 * only core. A new top-level folder of src/ must be placed here before its first import passes.
 * A room with an `entry` is entered only through it (docs/decisions/0056).
 */
const rooms: Room[] = [
  // Composition roots: wire everything together; nothing imports them.
  // `clearline serve`: starts every adapter and job (service/: each under its lease in a fleet)
  { name: "service", layer: "composition", paths: ["service.ts", "service/"] },
  { name: "cli", layer: "composition", paths: ["cli/"] },                  // the `clearline` command: each subcommand composes what it runs
  // Adapters: turn a channel's input into service calls and the answers back into the channel's protocol.
  { name: "api", layer: "adapter", paths: ["api/"] },                      // HTTP: the API, the operations API and the operators' console (api/console/)
  { name: "gateway", layer: "adapter", paths: ["gateway/"] },              // ISO 8583 over TCP: framing, sessions, admission, STAN/RRN, the outbound link, replies
  { name: "sources", layer: "adapter", paths: ["sources/"] },              // inputs pulled from outside: drop folders, SFTP, the JetStream inbox
  // Services: what the business does, each owning its tables' SQL.
  { name: "files", layer: "service", paths: ["files/"] },                  // received files: receipt, reading, processing, reports, status files to partners
  { name: "records", layer: "service", paths: ["records/"] },              // the record core: key, fingerprint, decision, posting
  { name: "outbox", layer: "service", paths: ["outbox/"] },                // transactional outbox, relays, webhooks, JetStream events
  { name: "recon", layer: "service", paths: ["recon/"] },                  // reconciliation of our side against statements
  { name: "incidents", layer: "service", paths: ["incidents/"] },          // incident perimeter, compensation batches, source pauses
  { name: "partners", layer: "service", paths: ["partners/"] },            // clearing partners, their accounts and aliases, outbound files
  { name: "operators", layer: "service", paths: ["operators/"] },          // console operators, sessions, four-eyes decisions
  { name: "payments", layer: "service", paths: ["payments/"] },            // payments and refunds; the payment instruction every channel reads
  { name: "cards", layer: "service", paths: ["cards/"], entry: "cards/index.ts" }, // card messages: card identity, issuer and acquirer decisions, their stores (gateway/ -> cards/)
  { name: "idempotency", layer: "service", paths: ["idempotency/"] },      // idempotency records: claim, complete, expire
  { name: "requests", layer: "service", paths: ["requests/"] },            // a mutating request run once per key, whatever channel carried it, and its stored reply
  { name: "tenants", layer: "service", paths: ["tenants/"] },              // tenants and their API keys
  { name: "dedup", layer: "service", paths: ["dedup/"] },                  // the record of every dedup
  // leases of a fleet of serve processes: file sources, singleton jobs, the scheme link
  { name: "fleet", layer: "service", paths: ["fleet/"], entry: "fleet/index.ts" },
  // Core: pure codecs and the foundations every service stands on.
  { name: "normalize", layer: "core", paths: ["normalize/"] },             // typed message -> canonical record; key and posting rules as data
  { name: "ledger", layer: "core", paths: ["ledger/"] },                   // the one posting path, balances, verify
  { name: "protocols", layer: "core", paths: ["protocols/"] },             // pure codecs: ACH, ISO 20022, ISO 8583, statements
  { name: "db", layer: "core", paths: ["db/"] },                           // pool, transactions, migrations, embedded server
  { name: "config", layer: "core", paths: ["config/"] },                   // loading and validating the configuration
  { name: "limits", layer: "core", paths: ["config/limits.ts", "config/limits/"] }, // every named bound; imported by all, imports only assert
  { name: "errors", layer: "core", paths: ["errors/"] },                   // the error catalog, findings with positions, problem details
  { name: "observability", layer: "core", paths: ["observability/"] },     // logger, metrics, readiness
  { name: "assert", layer: "core", paths: ["assert.ts"] },                 // assert(): a broken invariant stops the process
];

/**
 * Imports that break the rules today from files the record core work is rewriting (issue 11
 * item 1); each one goes with that work, and an entry that matches no import any more fails the
 * test until it is removed.
 */
const allowedDuringMove: AllowedImport[] = [
];

/**
 * What adapters may not import (docs/decisions/0056): they translate, and reach the database, the
 * ledger and the record core through services. Measured before the rules were written: no
 * adapter imports pg; api/ and sources/ import from db/ only the Pool or Queryable type they pass
 * to services, and api/ the test of a failure's kind (503 or 500); none reads records/store/.
 * api/ still reads balances and statements from ledger/ directly, so the ledger ban names the
 * adapters it holds for today; the ledger's front door is where api/ moves to.
 */
const adapters = rooms.filter((room) => room.layer === "adapter").map((room) => room.name);
const bans: ImportBan[] = [
  { rooms: adapters, target: "pg", why: "the database driver is db/'s" },
  { rooms: adapters, target: "db/", except: ["db/failure-kind.ts"], typesFrom: ["db/pool.ts"], why: "an adapter passes a handle through, it opens no transaction" },
  { rooms: adapters, target: "records/store/", why: "the record core's store is private" },
  { rooms: ["gateway", "sources"], target: "ledger/", why: "balances and postings are a service's" },
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
const imports: ImportEdge[] = files.flatMap((from) => {
  const text = readFileSync(path.join(root, from), "utf8");
  const typeOnly = typeOnlySpecifiers(text);
  return importSpecifiers(text).flatMap((specifier) => {
    const to = resolveImport(from, specifier) ?? packageOf(specifier);
    return to === undefined ? [] : [{ from, to, typeOnly: typeOnly.has(specifier) }];
  });
});

describe("the import graph of src/", () => {
  it("holds the rooms' layers, keeps adapters apart and has no cycle", () => {
    expect(checkImportGraph(files, imports, rooms, allowedDuringMove)).toEqual([]);
  });

  it("enters a room with an entry only through it, and no adapter imports what it is banned", () => {
    expect(checkEntriesAndBans(imports, rooms, bans)).toEqual([]);
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

  it("reports a cycle between rooms with the import behind each step", () => {
    expect(check([["billing/bill.ts", "shipping/ship.ts"], ["shipping/label.ts", "billing/price.ts"]])).toEqual([
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
    const checkRules = (edges: Array<{ from: string; to: string; typeOnly?: boolean }>, bans = houseBans) =>
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

  it("names the package of a bare specifier", () => {
    expect(["pg", "pg/lib/client", "@nats-io/jetstream", "node:net", "./local.ts"].map(packageOf))
      .toEqual(["pg", "pg", "@nats-io/jetstream", "node:net", undefined]);
  });

  it("resolves relative specifiers against the importing file and leaves packages out", () => {
    expect([resolveImport("src/files/pipeline.ts", "../records/decide-records.ts"), resolveImport("src/files/pipeline.ts", "pg"), resolveImport("src/files/pipeline.ts", "node:fs")])
      .toEqual(["src/records/decide-records.ts", undefined, undefined]);
  });
});
