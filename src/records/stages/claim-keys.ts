import type { Queryable } from "../../db/pool.ts";
import { transferKeyOf } from "../../normalize/posting-rules.ts";
import { fileIdOf, undecided, type Candidate, type Decision, type RecordContext } from "../decision.ts";
import { insertKeys, type KeyRow } from "../store/keys.ts";

/**
 * Claims the natural key of the first occurrence of each key among the undecided records; the
 * unique index says which keys are new (`fresh`). Keys go in sorted order, so two transactions
 * claiming overlapping keys take their index locks in one order.
 */
export async function claimKeys(tx: Queryable, context: RecordContext, decisions: readonly Decision[]): Promise<Set<Candidate>> {
  const first = new Map<string, Candidate>();
  for (const decision of undecided(decisions)) {
    if (!first.has(decision.record.naturalKey)) first.set(decision.record.naturalKey, decision);
  }
  if (first.size === 0) return new Set();
  const chosen = [...first.values()].sort((a, b) => compareText(a.record.naturalKey, b.record.naturalKey));
  const inserted = await insertKeys(tx, context.tenantId, fileIdOf(context), chosen.map((d) => keyRowOf(context, d)));
  return new Set(chosen.filter((d) => inserted.has(d.record.naturalKey)));
}

function keyRowOf(context: RecordContext, d: Candidate): KeyRow {
  const r = d.record;
  return {
    naturalKey: r.naturalKey, fingerprint: r.fingerprint, channel: r.channel, kind: r.kind,
    state: d.rule.action === "reverse-original" ? "orphan" : "applied",
    recordIndex: context.arrival.kind === "file" ? d.item.index : null, position: d.item.position,
    amountMinor: r.amount, currency: r.currency, valueDate: r.valueDate,
    transferKey: d.rule.action === "post" && r.amount > 0n ? transferKeyOf(r.naturalKey, d.rule) : null,
    linkId1: d.item.linkIds[0] ?? null, linkId2: d.item.linkIds[1] ?? null,
    originalRef: r.original ?? null, originalId1: d.item.originalIds[0] ?? null, originalId2: d.item.originalIds[1] ?? null,
    identityKey: d.identityKey ?? null,
  };
}

/** Byte order, as PostgreSQL's "C" collation and JavaScript's default sort agree on for ASCII keys. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
