import { splitSqlStatements, withoutComments } from "../../src/db/sql-statements.ts";

/**
 * The tables that grow with traffic: a statement that scans or rewrites one of them under a lock
 * writers need, or holds its rows for a whole backfill, stops payments for as long as it runs
 * (docs/decisions/0083). Both names of a renamed table are listed.
 */
export const LARGE_TABLES = [
  "ledger_entry", "transfer", "balance_delta", "settlement_transfer_net", "account_balance",
  "payment", "refund", "idempotency_record", "dedup_event",
  "record_key", "ingest_record_key", "record_outcome", "ingest_outcome", "record_identity",
  "received_file", "ingest_file", "received_file_content", "ingest_file_content",
  "card", "iso8583_inbound", "iso8583_inbound_reversal", "iso8583_outbound",
  "recon_external_item", "recon_item_ref", "recon_result", "outbox_message", "incident_record",
] as const;

export interface LintFinding { file: string; line: number; rule: string; statement: string }

interface Statement { sql: string; line: number; batch: boolean }

type Rule = (s: Statement, file: FileFacts) => string | undefined;

interface FileFacts { transactional: boolean; created: Set<string>; views: Set<string>; text: string }

const large = new RegExp(`^(?:${LARGE_TABLES.join("|")})$`);
/** A large table this file did not create (an index on a table made in the same file is free). */
const isLarge = (table: string | undefined, file: FileFacts) =>
  table !== undefined && large.test(table) && !file.created.has(table);
const alterTable = /^ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?(\w+)\s+([\s\S]*)$/i;

const rules: Record<string, Rule> = {
  "index without CONCURRENTLY": (s, file) => {
    const m = /^CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?!CONCURRENTLY)[\s\S]*?\bON\s+(?:ONLY\s+)?(\w+)/i.exec(s.sql);
    return isLarge(m?.[1], file) ? `builds an index on ${m?.[1]} with its writes stopped` : undefined;
  },
  "CONCURRENTLY needs clearline:no-transaction and IF NOT EXISTS": (s, file) => {
    if (!/^CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\b/i.test(s.sql)) return undefined;
    if (file.transactional) return "a transaction refuses CONCURRENTLY";
    return /\bIF\s+NOT\s+EXISTS\b/i.test(s.sql) ? undefined : "a second run would fail on the index";
  },
  "column with a volatile default, a rewrite or a check": (s, file) => {
    const m = alterTable.exec(s.sql);
    if (!isLarge(m?.[1], file)) return undefined;
    const action = m?.[2] ?? "";
    if (/\bADD\s+(?:COLUMN\s+)?[\s\S]*\bDEFAULT\s+(?!now\(\)|current_timestamp|'[^']*'|-?\d|true|false|NULL)/i.test(action)) {
      return "a volatile default rewrites every row";
    }
    if (/\bADD\s+(?:COLUMN\s+)?(?!CONSTRAINT)[\s\S]*\b(?:CHECK|REFERENCES|PRIMARY\s+KEY|UNIQUE)\b/i.test(action)) {
      return "a constraint on a new column is checked by a scan under the table's lock";
    }
    if (/\bALTER\s+(?:COLUMN\s+)?\w+\s+(?:SET\s+DATA\s+)?TYPE\b/i.test(action)) return "a type change rewrites every row";
    return undefined;
  },
  "constraint without NOT VALID": (s, file) => {
    const m = alterTable.exec(s.sql);
    const action = m?.[2] ?? "";
    if (!isLarge(m?.[1], file) || !/\bADD\s+CONSTRAINT\b[\s\S]*\b(?:CHECK|FOREIGN\s+KEY)\b/i.test(action)) return undefined;
    return /\bNOT\s+VALID\b/i.test(action) ? undefined : "adds a constraint with a scan under the table's lock (NOT VALID, then VALIDATE)";
  },
  "SET NOT NULL without a validated check": (s, file) => {
    const m = alterTable.exec(s.sql);
    if (!isLarge(m?.[1], file) || !/\bSET\s+NOT\s+NULL\b/i.test(m?.[2] ?? "")) return undefined;
    return /\bVALIDATE\s+CONSTRAINT\b/i.test(file.text) ? undefined : "scans the table under its lock unless a validated CHECK (x IS NOT NULL) says it need not";
  },
  "backfill not in batches": (s, file) => {
    if (s.batch) return undefined;
    const m = /^(?:WITH[\s\S]*?\)\s*)?(?:UPDATE\s+(?:ONLY\s+)?(\w+)|DELETE\s+FROM\s+(?:ONLY\s+)?(\w+))/i.exec(s.sql);
    const table = m?.[1] ?? m?.[2];
    if (isLarge(table, file)) return `changes ${table}'s rows in one transaction`;
    const read = /^INSERT\s+INTO\s+\w+[\s\S]*?\bFROM\s+(\w+)/i.exec(s.sql)?.[1];
    return isLarge(read, file) ? `copies from all of ${read} in one transaction` : undefined;
  },
  "rename without the old name kept (expand, then contract)": (s, file) => {
    const m = /^ALTER\s+TABLE\s+(\w+)\s+RENAME\s+TO\s+(\w+)/i.exec(s.sql);
    if (!m || file.created.has(m[1] ?? "")) return undefined;
    return file.views.has(m[1] ?? "") ? undefined : `a process of the release before still names ${m[1]}`;
  },
  "a statement that takes the table whole": (s) => {
    if (/^(?:LOCK\s+TABLE|VACUUM\s+FULL|CLUSTER)\b/i.test(s.sql)) return "stops every reader and writer";
    return /^REINDEX\b(?![\s\S]*CONCURRENTLY)/i.test(s.sql) ? "stops writers for the rebuild" : undefined;
  },
};

/** Findings of one migration file's text. */
export function lintMigration(file: string, text: string): LintFinding[] {
  const statements = splitSqlStatements(text).map((s) => ({
    sql: withoutComments(s.text).trim(), line: s.line, batch: /^--\s*clearline:batch\b/m.test(s.text),
  }));
  const facts: FileFacts = {
    transactional: !/^--\s*clearline:no-transaction\b/m.test(text),
    created: new Set(statements.flatMap((s) => /^CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)/i.exec(s.sql)?.[1] ?? [])),
    views: new Set(statements.flatMap((s) => /^CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+(\w+)/i.exec(s.sql)?.[1] ?? [])),
    text,
  };
  const findings: LintFinding[] = [];
  for (const statement of statements) {
    for (const [rule, check] of Object.entries(rules)) {
      const why = check(statement, facts);
      if (why !== undefined) {
        findings.push({ file, line: statement.line, rule: `${rule}: ${why}`, statement: statement.sql.slice(0, 80) });
      }
    }
  }
  return findings;
}
