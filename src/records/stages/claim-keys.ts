import { assert } from "../../assert.ts";
import type { Queryable } from "../../db/pool.ts";
import { namedAccountsOf, transferKeyOf } from "../../normalize/posting-rules.ts";
import { fileIdOf, type Candidate, type Decided, type RecordContext } from "../decision.ts";
import {
  claimKeysAndIdentities, storedKeysOf, type ClaimResult, type KeyClaim, type StoredKey,
} from "../store/keys.ts";
import { identityFingerprint } from "./identities.ts";

/** What the claim says: the records whose keys are new, and the first arrival of the keys it found claimed before. */
export interface ClaimedKeys {
  fresh: Set<Candidate>;                   // in the keys' sorted order
  stored: Map<string, StoredKey>;
  /** Fresh records that claimed their payment identity first. */
  identitiesClaimed: Set<Candidate>;
  /** Records naming an account that is not there in their currency: rejected, nothing claimed. */
  rejected: Decided;
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
export async function claimKeys(
  tx: Queryable, context: RecordContext, candidates: readonly Candidate[],
  counterparties: ReadonlyMap<Candidate, string>,
): Promise<ClaimedKeys> {
  const known = context.repeatsExpected
    ? await storedKeysOf(tx, context.tenantId, candidates.map((c) => c.record.naturalKey))
    : new Map<string, StoredKey>();
  const first = new Map<string, Candidate>();
  for (const candidate of candidates) {
    // A key read as claimed before is a repeat: claiming it again would insert nothing. (Keys are
    // never deleted.) A record naming its own accounts is claimed anyway: the claim checks them.
    if (known.has(candidate.record.naturalKey) && !namesAccounts(candidate)) continue;
    if (!first.has(candidate.record.naturalKey)) first.set(candidate.record.naturalKey, candidate);
  }
  if (first.size === 0) {
    return { fresh: new Set(), stored: known, identitiesClaimed: new Set(), rejected: new Map() };
  }
  const chosen = [...first.values()].sort((a, b) => compareText(a.record.naturalKey, b.record.naturalKey));
  const claims = chosen.map((c) => keyClaimOf(context, c, counterparties.get(c)));
  const claimed = await claimKeysAndIdentities(tx, context.tenantId, fileIdOf(context), claims);
  const fresh = new Set<Candidate>();
  const identitiesClaimed = new Set<Candidate>();
  for (const candidate of chosen) {
    if (!claimed.keys.has(candidate.record.naturalKey)) continue;
    fresh.add(candidate);
    const identityKey = candidate.identityKey;
    const claimedIdentity = identityKey !== undefined && claimed.identities.has(identityKey);
    if (claimedIdentity) identitiesClaimed.add(candidate);
  }
  const rejected = rejectUnknownNamedAccounts(candidates, claimed);
  return { fresh, stored: new Map([...known, ...claimed.stored]), identitiesClaimed, rejected };
}

function namesAccounts(candidate: Candidate): boolean {
  return candidate.rule.legs?.some((leg) => leg.account === "named") === true;
}

/** Every record (first occurrence or repeat) naming an account that is not there in its currency: rejected, nothing claimed. */
function rejectUnknownNamedAccounts(
  candidates: readonly Candidate[], claimed: ClaimResult,
): Decided {
  const rejected: Decided = new Map();
  for (const candidate of candidates) {
    const record = candidate.record;
    const named = namesAccounts(candidate) ? namedAccountsOf(record, candidate.rule) : [];
    if (named === undefined) {
      const detail = "the record names no account for a leg its rule takes from it";
      rejected.set(candidate, { kind: "rejected", code: "RECORD_ACCOUNT_UNKNOWN", detail });
      continue;
    }
    const missing = named.find((id) => !claimed.accounts.has(id));
    if (missing !== undefined) {
      const detail = `no account ${missing}`;
      rejected.set(candidate, { kind: "rejected", code: "RECORD_ACCOUNT_UNKNOWN", detail });
      continue;
    }
    const other = named.find((id) => claimed.accounts.get(id) !== record.currency);
    if (other === undefined) continue;
    const otherCurrency = claimed.accounts.get(other) ?? "?";
    const detail = `account ${other} is in ${otherCurrency}, the record in ${record.currency}`;
    rejected.set(candidate, { kind: "rejected", code: "RECORD_ACCOUNT_CURRENCY_MISMATCH", detail });
  }
  return rejected;
}

function keyClaimOf(
  context: RecordContext, d: Candidate, counterparty: string | undefined,
): KeyClaim {
  const r = d.record;
  const transferKey = d.rule.action === "post" && r.amount > 0n ? transferKeyOf(r.naturalKey, d.rule) : null;
  const namedAccounts = namesAccounts(d) ? (namedAccountsOf(r, d.rule) ?? ["", ""]) : [];
  assert(namedAccounts.length <= 2, `rule ${d.rule.channel} ${d.rule.kind} names at most two accounts`);
  const identity = d.identityKey !== undefined && d.rule.action === "post"
    ? { fingerprint: identityFingerprint(d, counterparty), transferKey } : null;
  return {
    naturalKey: r.naturalKey, fingerprint: r.fingerprint, channel: r.channel, kind: r.kind,
    state: d.rule.action === "reverse-original" ? "orphan" : "applied",
    recordIndex: context.arrival.kind === "file" ? d.item.index : null, position: d.item.position,
    amountMinor: r.amount, currency: r.currency, valueDate: r.valueDate, transferKey,
    linkId1: d.item.linkIds[0] ?? null, linkId2: d.item.linkIds[1] ?? null,
    originalRef: r.original ?? null, originalId1: d.item.originalIds[0] ?? null, originalId2: d.item.originalIds[1] ?? null,
    identityKey: d.identityKey ?? null, namedAccounts, identity,
    ...instructedAmountsOf(r.attributes),
  };
}

/** A pacs.008's InstdAmt and charges as the normalizer read them (docs/decisions/0108). */
function instructedAmountsOf(attributes: Record<string, string>): Pick<KeyClaim,
  "instructedAmountMinor" | "instructedCurrency" | "chargesMinor"> {
  const instructed = attributes.instructedAmountMinor;
  const charges = attributes.chargesMinor;
  return {
    instructedAmountMinor: instructed === undefined ? null : BigInt(instructed),
    instructedCurrency: attributes.instructedCurrency ?? null,
    chargesMinor: charges === undefined ? null : BigInt(charges),
  };
}

/** Byte order, as PostgreSQL's "C" collation and JavaScript's default sort agree on for ASCII keys. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
