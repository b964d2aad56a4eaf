import type { MatchingRule, MatchingRules } from "./matching-rules.ts";

/** One of their items as the matcher sees it. Amounts are signed: money into our account positive. */
export interface TheirItem {
  itemKey: string;
  bookingDate: string;
  amountSigned: bigint;
  currency: string;
  pending: boolean;
  duplicateOf?: string;
  refs: string[];            // reference values (untagged) that may name one of our transfers
  words(): string[];         // words of their description, for "contains" (computed when a rule asks)
  parts: Array<{ amountSigned?: bigint; refs: string[] }>;
  /**
   * In another currency than the account (decision 0104): never matched; its amount in the
   * account's currency when the statement gives one, signed like amountSigned.
   */
  foreign?: { accountAmountSigned?: bigint };
}

/** One of our transfers on the reconciled account, net of its entries there, signed the same way. */
export interface OurTransfer {
  transferKey: string;
  valueDate: string;
  amountSigned: bigint;
  currency: string;
  refs: string[];
}

export type MatchOutcome =
  | "matched" | "theirs_only" | "ours_only" | "amount_differs" | "date_outside_window"
  | "duplicate_on_their_side" | "pending" | "foreign_currency";

export interface MatchResult {
  outcome: MatchOutcome;
  rule?: string;
  itemKeys: string[];
  transferKeys: string[];
  theirsMinor: bigint;
  oursMinor: bigint;
}

/** Listed in this order: what they have and we do not is the most dangerous, so it comes first. */
export const outcomeOrder: readonly MatchOutcome[] = [
  "theirs_only", "foreign_currency", "amount_differs", "duplicate_on_their_side", "ours_only",
  "date_outside_window", "pending", "matched",
];

const DAY_MS = 86_400_000;
const dayNumbers = new Map<string, number>(); // a run sees few distinct dates: parse each once
function dayNumber(date: string): number {
  let day = dayNumbers.get(date);
  if (day === undefined) {
    day = Date.parse(date) / DAY_MS;
    if (dayNumbers.size < 10_000) dayNumbers.set(date, day);
  }
  return day;
}
function daysApart(a: string, b: string): number {
  return Math.abs(dayNumber(a) - dayNumber(b));
}
function abs(n: bigint): bigint {
  return n < 0n ? -n : n;
}

class MatchState {
  readonly results: MatchResult[] = [];
  readonly usedItems = new Set<string>();
  readonly usedTransfers = new Set<string>();
  readonly byRef = new Map<string, OurTransfer[]>();

  constructor(readonly theirs: TheirItem[], readonly ours: OurTransfer[]) {
    for (const transfer of ours) {
      for (const ref of new Set(transfer.refs)) {
        const list = this.byRef.get(ref);
        if (list) list.push(transfer);
        else this.byRef.set(ref, [transfer]);
      }
    }
  }

  record(outcome: MatchOutcome, items: TheirItem[], transfers: OurTransfer[], rule?: string): void {
    // Plain loops: this runs once per result, a few hundred thousand times in a large run.
    const itemKeys: string[] = [];
    const transferKeys: string[] = [];
    let theirsMinor = 0n;
    let oursMinor = 0n;
    for (const item of items) {
      this.usedItems.add(item.itemKey);
      itemKeys.push(item.itemKey);
      theirsMinor += item.amountSigned;
    }
    for (const transfer of transfers) {
      this.usedTransfers.add(transfer.transferKey);
      transferKeys.push(transfer.transferKey);
      oursMinor += transfer.amountSigned;
    }
    const result: MatchResult = { outcome, itemKeys, transferKeys, theirsMinor, oursMinor };
    if (rule) result.rule = rule;
    this.results.push(result);
  }

  /**
   * An item in another currency, set aside for a person (decision 0104): the difference is its
   * amount in the account's currency when the statement gives one, else nothing we could book.
   */
  recordForeign(item: TheirItem): void {
    this.usedItems.add(item.itemKey);
    this.results.push({
      outcome: "foreign_currency", itemKeys: [item.itemKey], transferKeys: [],
      theirsMinor: item.foreign?.accountAmountSigned ?? 0n, oursMinor: 0n,
    });
  }

  /** Unused transfers one of these references names, closest in date first (then by key: deterministic). */
  candidates(refs: readonly string[], currency: string, date: string): OurTransfer[] {
    if (refs.length === 1) {
      // The common case, one reference naming one transfer: no set, no sort.
      const named = this.byRef.get(refs[0] as string) ?? [];
      if (named.length <= 1) return named.filter((t) => !this.usedTransfers.has(t.transferKey) && t.currency === currency);
    }
    const found = new Map<string, OurTransfer>();
    for (const ref of refs) for (const t of this.byRef.get(ref) ?? []) if (!this.usedTransfers.has(t.transferKey) && t.currency === currency) found.set(t.transferKey, t);
    return [...found.values()].sort((a, b) => daysApart(a.valueDate, date) - daysApart(b.valueDate, date) || (a.transferKey < b.transferKey ? -1 : 1));
  }

  openItems(): TheirItem[] {
    return this.theirs.filter((i) => !this.usedItems.has(i.itemKey));
  }
}

function oneToOne(state: MatchState, rule: MatchingRule): void {
  const drift = BigInt(rule.amount.driftMinor);
  for (const item of state.openItems()) {
    const refs = rule.reference === "equals" ? item.refs : item.words();
    for (const t of state.candidates(refs, item.currency, item.bookingDate)) {
      const off = t.amountSigned === item.amountSigned ? 0n : abs(t.amountSigned - item.amountSigned);
      if (off <= drift && daysApart(t.valueDate, item.bookingDate) <= rule.dateWindowDays) {
        state.record("matched", [item], [t], rule.name);
        break;
      }
    }
  }
}

function oneToMany(state: MatchState, rule: MatchingRule): void {
  for (const item of state.openItems()) {
    if (item.parts.length < 2) continue;
    const chosen: OurTransfer[] = [];
    for (const part of item.parts) {
      const match = state.candidates(part.refs, item.currency, item.bookingDate).find((t) =>
        !chosen.includes(t) && daysApart(t.valueDate, item.bookingDate) <= rule.dateWindowDays
        && (part.amountSigned === undefined || t.amountSigned === part.amountSigned));
      if (!match) break;
      chosen.push(match);
    }
    const sum = chosen.reduce((s, t) => s + t.amountSigned, 0n);
    if (chosen.length === item.parts.length && abs(sum - item.amountSigned) <= BigInt(rule.amount.driftMinor)) state.record("matched", [item], chosen, rule.name);
  }
}

function manyToOne(state: MatchState, rule: MatchingRule): void {
  const groups = new Map<string, TheirItem[]>();
  for (const item of state.openItems()) for (const ref of new Set(item.refs)) groups.set(ref, [...(groups.get(ref) ?? []), item]);
  for (const [ref, group] of groups) {
    const items = group.filter((i) => !state.usedItems.has(i.itemKey));
    if (items.length < 2 || new Set(items.map((i) => i.currency)).size > 1) continue;
    const sum = items.reduce((s, i) => s + i.amountSigned, 0n);
    const first = items[0] as TheirItem;
    const match = state.candidates([ref], first.currency, first.bookingDate).find((t) =>
      abs(t.amountSigned - sum) <= BigInt(rule.amount.driftMinor) && items.every((i) => daysApart(t.valueDate, i.bookingDate) <= rule.dateWindowDays));
    if (match) state.record("matched", items, [match], rule.name);
  }
}

/** What the reference ties together but the rules did not accept: an amount off, or a date too far. */
function nearMatches(state: MatchState, rules: MatchingRules): void {
  for (const item of state.openItems()) {
    const near = state.candidates(item.refs, item.currency, item.bookingDate).find((t) => daysApart(t.valueDate, item.bookingDate) <= rules.nearMatch.dateWindowDays);
    if (!near) continue;
    state.record(near.amountSigned === item.amountSigned ? "date_outside_window" : "amount_differs", [item], [near], "near-match");
  }
}

/**
 * Two-sided matching of one account over one period: every item of theirs and every transfer
 * of ours ends in exactly one result. Their duplicates and pending items are set aside first;
 * the rules are tried in order (first match wins, and names itself); what the reference ties
 * together but no rule accepted is an amount or date difference; the rest is theirs_only or
 * ours_only. `inPeriod` drops unmatched items and transfers that belong to a neighbouring period
 * (they were loaded only so that matches across the period's edge are found).
 */
export function reconcile(theirs: TheirItem[], ours: OurTransfer[], rules: MatchingRules, inPeriod: (date: string) => boolean): MatchResult[] {
  const sortedTheirs = [...theirs].sort((a, b) => (a.itemKey < b.itemKey ? -1 : a.itemKey > b.itemKey ? 1 : 0));
  const sortedOurs = [...ours].sort((a, b) => (a.transferKey < b.transferKey ? -1 : a.transferKey > b.transferKey ? 1 : 0));
  const state = new MatchState(sortedTheirs, sortedOurs);
  for (const item of sortedTheirs) {
    if (item.duplicateOf !== undefined) state.record("duplicate_on_their_side", [item], []);
    else if (item.pending) state.record("pending", [item], []);
    else if (item.foreign) state.recordForeign(item);
  }
  for (const rule of rules.rules) {
    if (rule.strategy === "one-to-one") oneToOne(state, rule);
    else if (rule.strategy === "one-to-many") oneToMany(state, rule);
    else manyToOne(state, rule);
  }
  nearMatches(state, rules);
  for (const item of state.openItems()) if (inPeriod(item.bookingDate)) state.record("theirs_only", [item], []);
  for (const transfer of sortedOurs) {
    if (!state.usedTransfers.has(transfer.transferKey) && inPeriod(transfer.valueDate)) state.record("ours_only", [], [transfer]);
  }
  // A match made entirely outside the period belongs to the neighbouring period's run.
  const itemDates = new Map(sortedTheirs.map((i) => [i.itemKey, i.bookingDate]));
  const transferDates = new Map(sortedOurs.map((t) => [t.transferKey, t.valueDate]));
  const touchesPeriod = (r: MatchResult) => r.itemKeys.some((k) => inPeriod(itemDates.get(k) ?? "")) || r.transferKeys.some((k) => inPeriod(transferDates.get(k) ?? ""));
  const rank = (o: MatchOutcome) => outcomeOrder.indexOf(o);
  return state.results.filter(touchesPeriod).sort((a, b) => rank(a.outcome) - rank(b.outcome));
}
