import { assert } from "../assert.ts";

/**
 * The normalizer's one input shape: whatever channel a payment came through, it becomes this.
 * Dedup works on `naturalKey` (the stable business identity of THIS record) and compares
 * `fingerprint` (a hash of the economically meaningful fields) when a key is seen again.
 */
export const channels = ["ach", "iso20022", "iso8583", "http"] as const;
export type Channel = (typeof channels)[number];

/**
 * The channel a stored row names. Rows written before decision 0068 name the HTTP channel "api"
 * (its name in the record core until then): they read as "http", so a record of the HTTP channel
 * is one channel whenever it arrived. The row's other columns (keys, transfer keys) never change.
 */
export function storedChannel(name: string): Channel {
  const channel = name === "api" ? "http" : channelNamed(name);
  assert(channel !== undefined, `a stored channel is one of ${channels.join(", ")}: ${name}`);
  return channel;
}

/** The channel of this name; undefined for a name that is none. */
export function channelNamed(name: string): Channel | undefined {
  return channels.find((channel) => channel === name);
}

export interface CanonicalRecord {
  tenantId: string;
  channel: Channel;
  naturalKey: string;      // channel-prefixed, e.g. "ach:09101298:091012980000001:..."
  intentId: string;        // end-to-end identity (UETR, EndToEndId, RRN, client reference)
  kind: string;            // credit, debit, return, reversal, cancellation, status, auth, noc, ...
  amount: bigint;          // minor units, >= 0 (0 only for non-monetary records: NOC, status)
  currency: string;        // ISO 4217
  valueDate: string;       // YYYY-MM-DD
  /**
   * YYYY-MM-DD, the business day its money settles (docs/decisions/0101); absent when the
   * channel gives none (its value date stands for it). Not part of the fingerprint: it depends on
   * configuration (calendars), and a replay is never a conflict for it.
   */
  settlementDate?: string;
  original?: string;       // natural key (or link key) of the record this one returns/reverses/cancels
  fingerprint: string;     // sha256 hex of the normalized economic content
  /** Where it came from; `ref`, when given, is what the posting's source_ref says (identifiers only). */
  source: { fileId?: string; position?: string; connection?: string; ref?: string };
  /** Channel-specific facts the posting rules need (transaction code, counterparty alias, ...). Strings only. */
  attributes: Record<string, string>;
}
