import type { Room } from "./import-graph.ts";

/**
 * The rooms of src/ and their layers (docs/decisions/0034). Composition roots may import
 * anything; adapters translate a channel and import services and core, never each other;
 * services hold the business and import core and other services (without cycles); core imports
 * only core. A new top-level folder of src/ must be placed here before its first import passes.
 * Inside each layer the rooms are listed top first, and a room imports only rooms below it
 * (docs/decisions/0069): the order is today's graph, so a new import that climbs inside a layer
 * fails. A folder room with an index.ts is entered only through it (docs/decisions/0056, 0069).
 */
export const roomsTable: readonly Room[] = [
  // Composition roots: wire everything together; nothing imports them.
  // the `clearline` command: each subcommand composes what it runs (`serve` runs service.ts)
  { name: "cli", layer: "composition", paths: ["cli/"] },
  // `clearline serve`: starts every adapter and job (service/: each under its lease in a fleet)
  { name: "service", layer: "composition", paths: ["service.ts", "service/"] },

  // Adapters: turn a channel's input into service calls and the answers back into its protocol.
  // HTTP: the API, the operations API and the operators' console (api/console/)
  { name: "api", layer: "adapter", paths: ["api/"] },
  // ISO 8583 over TCP: framing, sessions, admission, STAN/RRN, the outbound link, replies
  { name: "gateway", layer: "adapter", paths: ["gateway/"] },
  // inputs pulled from outside: drop folders, SFTP, the JetStream inbox
  { name: "sources", layer: "adapter", paths: ["sources/"] },

  // Services: what the business does, each owning its tables' SQL.
  // console operators, sessions, four-eyes decisions
  { name: "operators", layer: "service", paths: ["operators/"] },
  // received files: receipt, reading, processing, reports, status files to partners
  { name: "files", layer: "service", paths: ["files/"] },
  // card messages: card identity, issuer and acquirer decisions, their stores (gateway/ -> cards/)
  { name: "cards", layer: "service", paths: ["cards/"] },
  // payments and refunds; the payment instruction every channel reads
  { name: "payments", layer: "service", paths: ["payments/"] },
  // incident perimeter, compensation batches, source pauses
  { name: "incidents", layer: "service", paths: ["incidents/"] },
  // reconciliation of our side against statements and scheme totals
  { name: "recon", layer: "service", paths: ["recon/"] },
  // the record core: key, fingerprint, decision, posting, reviews
  { name: "records", layer: "service", paths: ["records/"] },
  // a mutating request run once per key, whatever channel carried it, and its stored reply
  { name: "requests", layer: "service", paths: ["requests/"] },
  // idempotency records: claim, complete, expire
  { name: "idempotency", layer: "service", paths: ["idempotency/"] },
  // the record of every dedup
  { name: "dedup", layer: "service", paths: ["dedup/"] },
  // clearing partners, their accounts and aliases, outbound files
  { name: "partners", layer: "service", paths: ["partners/"] },
  // transactional outbox, relays, webhooks, JetStream events
  { name: "outbox", layer: "service", paths: ["outbox/"] },
  // tenants and their API keys
  { name: "tenants", layer: "service", paths: ["tenants/"] },
  // leases of a fleet of serve processes: file sources, singleton jobs, the scheme link (0072)
  { name: "fleet", layer: "service", paths: ["fleet/"] },

  // Core: pure codecs and the foundations every service stands on.
  // the one posting path, balances, verify (posts what normalize/ builds)
  { name: "ledger", layer: "core", paths: ["ledger/"] },
  // typed message -> canonical record; key and posting rules as data
  { name: "normalize", layer: "core", paths: ["normalize/"] },
  // loading and validating the configuration (names the shipped ISO 8583 dictionaries)
  { name: "config", layer: "core", paths: ["config/"] },
  // pure codecs: ACH, ISO 20022, ISO 8583, statements
  { name: "protocols", layer: "core", paths: ["protocols/"] },
  // pool, transactions, migrations, embedded server
  { name: "db", layer: "core", paths: ["db/"] },
  // logger, metrics, readiness
  { name: "observability", layer: "core", paths: ["observability/"] },
  // the error catalog, findings with positions, problem details
  { name: "errors", layer: "core", paths: ["errors/"] },
  // every named bound; imported by all, imports only assert
  { name: "limits", layer: "core", paths: ["config/limits.ts", "config/limits/"] },
  // assert(): a broken invariant stops the process
  { name: "assert", layer: "core", paths: ["assert.ts"] },
];

/**
 * The room that owns each table of the migrated schema (docs/decisions/0069): its SQL names the
 * table; any other room asks it through its functions. A table the migrations add needs an owner
 * here before the test passes.
 */
export const tableOwners: Readonly<Record<string, string>> = {
  // The ledger: accounts, transfers and their entries, the balance projection, compensations and
  // the settlement net kept at posting (0049), the verification checkpoints (0089).
  account: "ledger", transfer: "ledger", ledger_entry: "ledger", account_balance: "ledger",
  balance_delta: "ledger", compensation: "ledger", settlement_transfer_net: "ledger",
  ledger_verify_checkpoint: "ledger", ledger_verify_account: "ledger",
  // The record core: dedup marks, outcomes, reviews and their decisions, payment identities.
  record_key: "records", record_outcome: "records", record_review: "records",
  review_decision: "records", record_identity: "records", record_superseded: "records",
  // Received files and their content.
  received_file: "files", received_file_content: "files",
  // Card messages: cards, BIN routing, the issuer's and the acquirer's stores, the STAN counter.
  card: "cards", card_issuer_bin: "cards", iso8583_inbound: "cards",
  iso8583_inbound_reversal: "cards", iso8583_outbound: "cards", iso8583_stan_counter: "cards",
  // Reconciliation, scheme totals' exchanges included.
  recon_import: "recon", recon_external_item: "recon", recon_item_ref: "recon", recon_run: "recon",
  recon_result: "recon", recon_difference: "recon", iso8583_recon_totals: "recon",
  incident: "incidents", incident_record: "incidents", incident_compensation: "incidents",
  source_pause: "incidents",
  operator: "operators", operator_session: "operators", tenant_four_eyes: "operators",
  decision_proposal: "operators", suspense_move: "operators",
  partner: "partners", account_alias: "partners", ach_return_entry: "partners",
  partner_outbound_file: "partners",
  payment: "payments", refund: "payments",
  outbox_message: "outbox", webhook_endpoint: "outbox",
  idempotency_record: "idempotency",
  dedup_event: "dedup",
  tenant: "tenants", api_key: "tenants",
  schema_migration: "db",
  fleet_lease: "fleet", fleet_job_run: "fleet",
};
