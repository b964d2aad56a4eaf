/**
 * Dedup marks (record_key): the claim of a natural key, where each key stands, and the
 * lookups the stages make across keys (repeats, UETR legs, suspects, originals and orphans). Set-based:
 * one statement per stage and chunk.
 */
import type { Queryable } from "../../db/pool.ts";
import { currentCode } from "../../errors/catalog.ts";
import { storedChannel, type Channel } from "../../normalize/canonical-record.ts";
import type { KeyState } from "../record-states.ts";

const column = <T, R>(rows: readonly T[], pick: (row: T) => R): R[] => rows.map(pick);

export interface KeyRow {
  naturalKey: string; fingerprint: string; channel: string; kind: string; state: KeyState;
  recordIndex: number | null; position: string; amountMinor: bigint; currency: string; valueDate: string;
  transferKey: string | null; linkId1: string | null; linkId2: string | null;
  originalRef: string | null; originalId1: string | null; originalId2: string | null; identityKey: string | null;
  /** A pacs.008's InstdAmt and the sum of its ChrgsInf (docs/decisions/0108); null otherwise. */
  instructedAmountMinor: bigint | null; instructedCurrency: string | null;
  chargesMinor: bigint | null;
}


/** A key to claim, with the accounts its rule names from the record and the payment identity it carries. */
export interface KeyClaim extends KeyRow {
  namedAccounts: readonly string[];          // checked to exist in the record's currency before the key is claimed
  identity: { fingerprint: string; transferKey: string | null } | null;   // claimed with the key (identityKey above)
}

export interface ClaimResult {
  keys: Set<string>;                         // natural keys this statement inserted (new)
  identities: Set<string>;                   // payment identities this statement claimed first
  accounts: Map<string, string>;             // the named accounts that exist, with their currency
  /**
   * The first arrival of each key this statement found claimed before (a repeat), as its snapshot
   * saw it. A key another transaction committed while this one waited on it is not here: its
   * reader looks it up (storedKeysOf).
   */
  stored: Map<string, StoredKey>;
}

/**
 * ONE statement claims a batch: the named accounts are read, the dedup marks of the records whose
 * named accounts exist in their currency are inserted (ON CONFLICT DO NOTHING: the unique index
 * says which are new), and the new ones claim their payment identities (the first claim wins).
 * A record naming an unknown account claims nothing. The keys that were not inserted are read
 * back in the same statement (the repeats stage compares them): a re-ingested chunk, all repeats,
 * costs one statement where it cost two, and a new chunk's read probes no key at all (it reads
 * only what the insert left out). One round trip for what were four.
 */
export async function claimKeysAndIdentities(tx: Queryable, tenantId: string, fileId: string | null, rows: readonly KeyClaim[]): Promise<ClaimResult> {
  const result: ClaimResult = { keys: new Set(), identities: new Set(), accounts: new Map(), stored: new Map() };
  if (rows.length === 0) return result;
  const { rows: claimed } = await tx.query<{ what: "key" | "identity" | "account" | "stored"; value: string; currency: string | null; stored: StoredKeyJson | null }>({
    // Prepared once per connection: planning this statement costs more than running it for one record.
    name: "clearline.records.claim",
    // Every lookup by a list of keys probes the index once per key (a LATERAL subquery behind
    // OFFSET 0), whatever the planner believes of the table's size (docs/decisions/0052).
    text: `WITH named AS (
       SELECT a.account_id, a.currency
         FROM (SELECT DISTINCT unnest(array_cat($20::text[], $21::text[]))) AS w(account_id)
        CROSS JOIN LATERAL (SELECT account_id, currency FROM account WHERE tenant_id = $1 AND account_id = w.account_id OFFSET 0) a
     ), k AS (
       INSERT INTO record_key (tenant_id, natural_key, fingerprint, channel, kind, state, file_id,
                                      record_index, position,
                                      amount_minor, currency, value_date, transfer_key, link_id1, link_id2,
                                      original_ref, original_id1, original_id2, identity_key,
                                      instructed_amount_minor, instructed_currency, charges_minor)
       SELECT $1, k.natural_key, k.fingerprint, k.channel, k.kind, k.state, $2, k.record_index, k.position,
              k.amount_minor, k.currency, k.value_date::date, k.transfer_key, k.link_id1, k.link_id2,
              k.original_ref, k.original_id1, k.original_id2, k.identity_key,
              k.instructed_amount_minor, k.instructed_currency, k.charges_minor
         FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::text[], $10::bigint[], $11::text[], $12::text[],
                     $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[],
                     $19::text[], $20::text[], $21::text[],
                     $24::bigint[], $25::text[], $26::bigint[])
              AS k(natural_key, fingerprint, channel, kind, state, record_index, position, amount_minor, currency, value_date,
                   transfer_key, link_id1, link_id2, original_ref, original_id1, original_id2,
                   identity_key, named1, named2,
                   instructed_amount_minor, instructed_currency, charges_minor)
        WHERE (k.named1 IS NULL OR EXISTS (SELECT 1 FROM named n WHERE n.account_id = k.named1 AND n.currency = k.currency))
          AND (k.named2 IS NULL OR EXISTS (SELECT 1 FROM named n WHERE n.account_id = k.named2 AND n.currency = k.currency))
       ON CONFLICT (tenant_id, natural_key) DO NOTHING
       RETURNING natural_key
     ), i AS (
       INSERT INTO record_identity (tenant_id, identity_key, natural_key, channel, fingerprint, transfer_key)
       SELECT $1, x.identity_key, x.natural_key, x.channel, x.fingerprint, x.transfer_key
         FROM unnest($3::text[], $5::text[], $19::text[], $22::text[], $23::text[]) AS x(natural_key, channel, identity_key, fingerprint, transfer_key)
        WHERE x.identity_key IS NOT NULL AND x.natural_key IN (SELECT natural_key FROM k)
       ON CONFLICT (tenant_id, identity_key) DO NOTHING
       RETURNING identity_key
     ), s AS (
       SELECT s.natural_key, s.fingerprint, s.transfer_key, s.state, s.amount_minor::text AS amount_minor, s.file_id, s.record_index, s.position
         FROM (SELECT unnest($3::text[]) EXCEPT SELECT natural_key FROM k) AS w(natural_key)
        CROSS JOIN LATERAL (${STORED_KEY_PROBE_SQL}) s
     )
     SELECT 'key' AS what, natural_key AS value, NULL::text AS currency, NULL::jsonb AS stored FROM k
     UNION ALL SELECT 'identity', identity_key, NULL, NULL FROM i
     UNION ALL SELECT 'account', account_id, currency, NULL FROM named
     UNION ALL SELECT 'stored', natural_key, NULL, to_jsonb(s) FROM s`,
    values: [
      tenantId, fileId,
      column(rows, (r) => r.naturalKey), column(rows, (r) => r.fingerprint), column(rows, (r) => r.channel), column(rows, (r) => r.kind),
      column(rows, (r) => r.state), column(rows, (r) => r.recordIndex), column(rows, (r) => r.position), column(rows, (r) => r.amountMinor.toString()),
      column(rows, (r) => r.currency), column(rows, (r) => r.valueDate), column(rows, (r) => r.transferKey),
      column(rows, (r) => r.linkId1), column(rows, (r) => r.linkId2), column(rows, (r) => r.originalRef),
      column(rows, (r) => r.originalId1), column(rows, (r) => r.originalId2), column(rows, (r) => r.identityKey),
      column(rows, (r) => r.namedAccounts[0] ?? null), column(rows, (r) => r.namedAccounts[1] ?? null),
      column(rows, (r) => r.identity?.fingerprint ?? null), column(rows, (r) => r.identity?.transferKey ?? null),
      column(rows, (r) => r.instructedAmountMinor?.toString() ?? null),
      column(rows, (r) => r.instructedCurrency),
      column(rows, (r) => r.chargesMinor?.toString() ?? null),
    ],
  });
  for (const row of claimed) {
    if (row.what === "key") result.keys.add(row.value);
    else if (row.what === "identity") result.identities.add(row.value);
    else if (row.what === "stored" && row.stored) result.stored.set(row.value, { ...row.stored, amount_minor: BigInt(row.stored.amount_minor) });
    else result.accounts.set(row.value, row.currency ?? "");
  }
  return result;
}

/**
 * The stored key `w.natural_key` of tenant $1, as the body of a LATERAL subquery: one probe of the
 * primary key. OFFSET 0 keeps the planner from folding it into a join it could run as a scan of
 * the tenant's keys (docs/decisions/0052). The name of the file it came in is read only for the
 * keys that need it (a conflict's detail: selectFileNames), not per repeat (docs/decisions/0053).
 */
const STORED_KEY_PROBE_SQL = `
  SELECT k.natural_key, k.fingerprint, k.transfer_key, k.state, k.amount_minor, k.file_id, k.record_index, k.position
    FROM record_key k
   WHERE k.tenant_id = $1 AND k.natural_key = w.natural_key
  OFFSET 0`;

export interface StoredKey {
  natural_key: string; fingerprint: string; transfer_key: string | null; state: KeyState; amount_minor: bigint;
  file_id: string | null; record_index: number | null; position: string;
}

/** A stored key as to_jsonb gives it, the amount as text (a JSON number would pass through a float). */
type StoredKeyJson = Omit<StoredKey, "amount_minor"> & { amount_minor: string };

/** The first arrival of keys seen before. */
export async function storedKeysOf(
  tx: Queryable, tenantId: string, naturalKeys: readonly string[],
): Promise<Map<string, StoredKey>> {
  const { rows } = await tx.query<StoredKey>(
    `SELECT s.* FROM unnest($2::text[]) AS w(natural_key) CROSS JOIN LATERAL (${STORED_KEY_PROBE_SQL}) s`,
    [tenantId, [...new Set(naturalKeys)]],
  );
  return new Map(rows.map((r) => [r.natural_key, r]));
}

export interface FileName { original_name: string; identity_key: string | null }

/** The name and identity of these files, for a detail that names where a key was first seen. */
export async function selectFileNames(tx: Queryable, tenantId: string, fileIds: readonly string[]): Promise<Map<string, FileName>> {
  if (fileIds.length === 0) return new Map();
  const { rows } = await tx.query<FileName & { file_id: string }>(
    // One probe of the primary key per file, whatever the planner believes of the table (docs/decisions/0052).
    `SELECT f.file_id, f.original_name, f.identity_key
       FROM unnest($2::text[]) AS w(file_id)
      CROSS JOIN LATERAL (SELECT file_id, original_name, identity_key FROM received_file
        WHERE tenant_id = $1 AND file_id = w.file_id OFFSET 0) f`,
    [tenantId, [...new Set(fileIds)]]);
  return new Map(rows.map((r) => [r.file_id, r]));
}

export interface UetrRow {
  natural_key: string; link_id1: string; link_id2: string | null; amount_minor: bigint;
  currency: string;
  transfer_key: string | null;
  instructed_amount_minor: string | null; instructed_currency: string | null;
  charges_minor: string | null;
}

/** Applied records carrying these UETRs under other keys, oldest first. */
export async function selectAppliedByUetr(tx: Queryable, tenantId: string, uetrs: readonly string[], kinds: readonly string[], exceptKeys: readonly string[]): Promise<UetrRow[]> {
  const { rows } = await tx.query<UetrRow>(
    `SELECT k.natural_key, k.link_id1, k.link_id2, k.amount_minor, k.currency, k.transfer_key,
            k.instructed_amount_minor::text, k.instructed_currency, k.charges_minor::text
       FROM unnest($2::text[]) AS w(link_id1)
      CROSS JOIN LATERAL (
        SELECT natural_key, link_id1, link_id2, amount_minor, currency, transfer_key, created_at,
               instructed_amount_minor, instructed_currency, charges_minor
          FROM record_key
         WHERE tenant_id = $1 AND link_id1 = w.link_id1 AND kind = ANY($3::text[]) AND state = 'applied' AND NOT natural_key = ANY($4::text[])
        OFFSET 0) k
      ORDER BY k.created_at, k.natural_key`,
    [tenantId, [...new Set(uetrs)], kinds, exceptKeys],
  );
  return rows;
}

/** The first record applied from another file than `fileId` with each of these fingerprints, inside the window (only file arrivals are compared). */
export async function selectRecentlyApplied(tx: Queryable, tenantId: string, fingerprints: readonly string[], fileId: string, windowHours: number): Promise<Map<string, { natural_key: string; transfer_key: string | null }>> {
  const { rows } = await tx.query<{ fingerprint: string; natural_key: string; transfer_key: string | null }>(
    `SELECT w.fingerprint, k.natural_key, k.transfer_key
       FROM unnest($2::text[]) AS w(fingerprint)
      CROSS JOIN LATERAL (
        SELECT natural_key, transfer_key FROM record_key
         WHERE tenant_id = $1 AND fingerprint = w.fingerprint AND file_id IS NOT NULL AND file_id <> $3 AND state = 'applied'
           AND created_at > now() - make_interval(hours => $4)
         ORDER BY created_at LIMIT 1) k`,
    [tenantId, [...new Set(fingerprints)], fileId, windowHours],
  );
  return new Map(rows.map((r) => [r.fingerprint, r]));
}

export interface KeyStateChange { naturalKey: string; state: KeyState; transferKey: string | null; matchedKey: string | null }

export async function updateKeyStates(tx: Queryable, tenantId: string, states: readonly KeyStateChange[]): Promise<void> {
  if (states.length === 0) return;
  await tx.query(
    `UPDATE record_key k SET state = s.state, transfer_key = s.transfer_key,
       matched_key = s.matched_key
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS s(natural_key, state, transfer_key, matched_key)
      WHERE k.tenant_id = $1 AND k.natural_key = s.natural_key`,
    [tenantId, column(states, (s) => s.naturalKey), column(states, (s) => s.state), column(states, (s) => s.transferKey), column(states, (s) => s.matchedKey)],
  );
}

/** A row as stored: its channel a name (storedChannel reads it). */
type StoredRow<T extends { channel: Channel }> = Omit<T, "channel"> & { channel: string };

export interface OriginalRow {
  natural_key: string; link_id1: string | null; link_id2: string | null; amount_minor: bigint;
  currency: string; transfer_key: string; channel: Channel;
  value_date: string;   // YYYY-MM-DD: for ACH the effective entry date (a return's deadline)
}

/** Posted records a return may name: by natural key or link id, else by the fallback ids. */
export async function selectOriginals(tx: Queryable, tenantId: string, refs: readonly string[], ids: readonly string[]): Promise<OriginalRow[]> {
  const { rows } = await tx.query<StoredRow<OriginalRow>>(
    `SELECT natural_key, link_id1, link_id2, amount_minor, currency, transfer_key, channel,
            to_char(value_date, 'YYYY-MM-DD') AS value_date
       FROM record_key
      WHERE tenant_id = $1 AND state = 'applied' AND transfer_key IS NOT NULL AND kind NOT IN ('return')
        AND (natural_key = ANY($2::text[]) OR link_id1 = ANY($2::text[]) OR link_id1 = ANY($3::text[]) OR link_id2 = ANY($3::text[]))`,
    [tenantId, refs, ids],
  );
  return rows.map((row) => ({ ...row, channel: storedChannel(row.channel) }));
}

/** Originals an applied return already reversed. */
export async function selectReversedOriginals(tx: Queryable, tenantId: string, originals: readonly string[]): Promise<Set<string>> {
  if (originals.length === 0) return new Set();
  const { rows } = await tx.query<{ matched_key: string }>(
    `SELECT matched_key FROM record_key WHERE tenant_id = $1 AND matched_key = ANY($2::text[])
       AND state = 'applied'`, [tenantId, originals]);
  return new Set(rows.map((r) => r.matched_key));
}

/** Whether any return waits for its original: one probe of a small partial index. */
export async function hasOrphans(tx: Queryable, tenantId: string): Promise<boolean> {
  const { rows } = await tx.query<{ waiting: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM record_key WHERE tenant_id = $1 AND state = 'orphan') AS waiting`,
    [tenantId]);
  return rows[0]?.waiting === true;
}

export interface OrphanRow {
  natural_key: string; fingerprint: string; channel: Channel; kind: string; file_id: string;
  record_index: number; position: string;
  amount_minor: bigint; currency: string; value_date: string; original_ref: string | null; original_id1: string | null; original_id2: string | null;
}

/** Returns waiting for an original that names one of `refs` or carries one of `ids`. */
export async function selectWaitingOrphans(tx: Queryable, tenantId: string, refs: readonly string[], ids: readonly string[]): Promise<OrphanRow[]> {
  const { rows } = await tx.query<StoredRow<OrphanRow>>(
    `SELECT natural_key, fingerprint, channel, kind, file_id, record_index, position, amount_minor, currency,
            to_char(value_date, 'YYYY-MM-DD') AS value_date, original_ref, original_id1, original_id2
       FROM record_key
      WHERE tenant_id = $1 AND state = 'orphan'
        AND (original_ref = ANY($2::text[]) OR original_id1 = ANY($3::text[]) OR original_id2 = ANY($3::text[]))`,
    [tenantId, refs, ids],
  );
  return rows.map((row) => ({ ...row, channel: storedChannel(row.channel) }));
}

/** An orphan's outcome row tells that its original arrived and the reversal was posted. */
export async function noteOrphanMatched(tx: Queryable, tenantId: string, orphan: Pick<OrphanRow, "file_id" | "record_index">, detail: string): Promise<void> {
  await tx.query(
    `UPDATE record_outcome SET detail = $4 WHERE tenant_id = $1 AND file_id = $2
       AND record_index = $3`,
    [tenantId, orphan.file_id, orphan.record_index, detail]);
}


export interface LinkStateRow { link_id: string; natural_key: string; state: KeyState; code: string | null; detail: string | null }

/** Per link id ("e2e:...", "uetr:..."), the most recent record carrying it, with the code and detail of its outcome. */
export async function keyStatesByLinkId(
  db: Queryable, tenantId: string, linkIds: readonly string[],
): Promise<LinkStateRow[]> {
  const { rows } = await db.query<LinkStateRow>(
    `SELECT DISTINCT ON (l.link_id) l.link_id, k.natural_key, k.state, o.code, o.detail
       FROM unnest($2::text[]) AS l(link_id)
       JOIN record_key k ON k.tenant_id = $1 AND (k.link_id1 = l.link_id OR k.link_id2 = l.link_id)
       LEFT JOIN record_outcome o ON o.tenant_id = k.tenant_id AND o.file_id = k.file_id
         AND o.record_index = k.record_index
      ORDER BY l.link_id, k.created_at DESC, k.natural_key`,
    [tenantId, linkIds],
  );
  // A row written before a code was renamed reads as the code's name now (docs/decisions/0068).
  return rows.map((row) => (row.code === null ? row : { ...row, code: currentCode(row.code) }));
}

export interface ReturnTargetRow {
  role: "original" | "return";
  natural_key: string;
  original_key: string | null;    // a return's: the original it was matched with, or names while it waits
  fingerprint: string; state: KeyState; transfer_key: string | null; amount_minor: bigint; currency: string;
}

/**
 * What a request's returns name (docs/decisions/0039): each original's key whatever its state, and
 * the returns already decided against it (linked: `matched_key`) or waiting for it (orphans), oldest
 * first, other than `exceptKeys` (the returns being decided). One statement on three indexes.
 */
export async function selectReturnTargets(tx: Queryable, tenantId: string, originalKeys: readonly string[], exceptKeys: readonly string[]): Promise<ReturnTargetRow[]> {
  const { rows } = await tx.query<ReturnTargetRow>({
    name: "clearline.records.return_targets",
    // Per original key: a probe of the primary key and one of each return index (docs/decisions/0052).
    text: `SELECT t.* FROM (SELECT DISTINCT unnest($2::text[])) AS w(original_key)
      CROSS JOIN LATERAL (
        SELECT * FROM (
          SELECT 'original' AS role, natural_key, NULL AS original_key, fingerprint, state, transfer_key, amount_minor, currency, created_at
            FROM record_key WHERE tenant_id = $1 AND natural_key = w.original_key
          UNION ALL
          SELECT 'return', natural_key, COALESCE(matched_key, original_ref), fingerprint, state, transfer_key, amount_minor, currency, created_at
            FROM record_key
           WHERE tenant_id = $1 AND matched_key = w.original_key AND state = 'applied' AND original_ref IS NOT NULL AND NOT natural_key = ANY($3::text[])
          UNION ALL
          SELECT 'return', natural_key, COALESCE(matched_key, original_ref), fingerprint, state, transfer_key, amount_minor, currency, created_at
            FROM record_key
           WHERE tenant_id = $1 AND original_ref = w.original_key AND state = 'orphan' AND NOT natural_key = ANY($3::text[])
        ) u OFFSET 0) t
     ORDER BY t.created_at, t.natural_key`,
    values: [tenantId, originalKeys, exceptKeys],
  });
  return rows;
}
