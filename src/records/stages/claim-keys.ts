import { assert } from "../../assert.ts";
import type { Queryable } from "../../db/pool.ts";
import { namedAccountsOf, transferKeyOf } from "../../normalize/posting-rules.ts";
import { decide, fileIdOf, undecided, type Candidate, type Decision, type RecordContext } from "../decision.ts";
import { claimKeysAndIdentities, selectKeys, type ClaimResult, type KeyClaim, type StoredKey } from "../store/keys.ts";
import { identityFingerprint } from "./identities.ts";

/** What the claim says: the records whose keys are new, and the first arrival of the keys it found claimed before. */
export interface ClaimedKeys {
  fresh: Set<Candidate>;
  stored: Map<string, StoredKey>;
}

/**
 * When the batch is expected to repeat keys claimed before (`context.repeatsExpected`: a re-upload),
 * its keys are read first, in one statement, and only the unknown ones are claimed: an all-repeat
 * chunk then sends its keys once and claims nothing (docs/decisions/0046). Either way the answers
 * are the same; only the statements differ.
 *
 * Claims, in one statement, the natural key of the first occurrence of each key among the
 * undecided records, and with each new key its payment identity; the unique indexes say which
 * are new (`fresh`). Keys go in sorted order, so two transactions claiming overlapping keys take
 * their index locks in one order.
 *
 * A record whose rule posts to accounts it names itself (an API payment's debtor and creditor) is
 * checked in the same statement: naming an unknown account, or one in another currency, is invalid
 * input, rejected like a malformed line, and leaves its key unclaimed. Accounts are permanent
 * (no delete, no change of currency: migration 0009), so the check holds for the transaction.
 */
export async function claimKeys(tx: Queryable, context: RecordContext, decisions: readonly Decision[]): Promise<ClaimedKeys> {
  const known = context.repeatsExpected ? await selectKeys(tx, context.tenantId, undecided(decisions).map((d) => d.record.naturalKey)) : new Map<string, StoredKey>();
  const first = new Map<string, Candidate>();
  for (const decision of undecided(decisions)) {
    // A key read as claimed before is a repeat: claiming it again would insert nothing. (Keys are
    // never deleted.) A record naming its own accounts is claimed anyway: the claim checks them.
    if (known.has(decision.record.naturalKey) && !namesAccounts(decision)) continue;
    if (!first.has(decision.record.naturalKey)) first.set(decision.record.naturalKey, decision);
  }
  if (first.size === 0) return { fresh: new Set(), stored: known };
  const chosen = [...first.values()].sort((a, b) => compareText(a.record.naturalKey, b.record.naturalKey));
  const claimed = await claimKeysAndIdentities(tx, context.tenantId, fileIdOf(context), chosen.map((d) => keyClaimOf(context, d)));
  rejectUnknownNamedAccounts(decisions, claimed);
  const fresh = new Set<Candidate>();
  for (const decision of chosen) {
    if (!claimed.keys.has(decision.record.naturalKey)) continue;
    fresh.add(decision);
    if (decision.identityKey !== undefined && claimed.identities.has(decision.identityKey)) decision.identityClaimed = true;
  }
  return { fresh, stored: new Map([...known, ...claimed.stored]) };
}

function namesAccounts(decision: Candidate): boolean {
  return decision.rule.legs?.some((leg) => leg.account === "named") === true;
}

/** Every record (first occurrence or repeat) naming an account that is not there in its currency: rejected, nothing claimed. */
function rejectUnknownNamedAccounts(decisions: readonly Decision[], claimed: ClaimResult): void {
  for (const decision of undecided(decisions)) {
    const named = namesAccounts(decision) ? namedAccountsOf(decision.record, decision.rule) : [];
    if (named === undefined) {
      decide(decision, "rejected", "RECORD_ACCOUNT_UNKNOWN", "the record names no account for a leg its rule takes from it");
      continue;
    }
    const missing = named.find((id) => !claimed.accounts.has(id));
    if (missing !== undefined) {
      decide(decision, "rejected", "RECORD_ACCOUNT_UNKNOWN", `no account ${missing}`);
      continue;
    }
    const other = named.find((id) => claimed.accounts.get(id) !== decision.record.currency);
    if (other !== undefined) decide(decision, "rejected", "RECORD_ACCOUNT_CURRENCY_MISMATCH", `account ${other} is in ${claimed.accounts.get(other) ?? "?"}, the record in ${decision.record.currency}`);
  }
}

function keyClaimOf(context: RecordContext, d: Candidate): KeyClaim {
  const r = d.record;
  const transferKey = d.rule.action === "post" && r.amount > 0n ? transferKeyOf(r.naturalKey, d.rule) : null;
  const namedAccounts = namesAccounts(d) ? (namedAccountsOf(r, d.rule) ?? ["", ""]) : [];
  assert(namedAccounts.length <= 2, `rule ${d.rule.channel} ${d.rule.kind} names at most two accounts`);
  return {
    naturalKey: r.naturalKey, fingerprint: r.fingerprint, channel: r.channel, kind: r.kind,
    state: d.rule.action === "reverse-original" ? "orphan" : "applied",
    recordIndex: context.arrival.kind === "file" ? d.item.index : null, position: d.item.position,
    amountMinor: r.amount, currency: r.currency, valueDate: r.valueDate, transferKey,
    linkId1: d.item.linkIds[0] ?? null, linkId2: d.item.linkIds[1] ?? null,
    originalRef: r.original ?? null, originalId1: d.item.originalIds[0] ?? null, originalId2: d.item.originalIds[1] ?? null,
    identityKey: d.identityKey ?? null, namedAccounts,
    identity: d.identityKey !== undefined && d.rule.action === "post" ? { fingerprint: identityFingerprint(d), transferKey } : null,
  };
}

/** Byte order, as PostgreSQL's "C" collation and JavaScript's default sort agree on for ASCII keys. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
