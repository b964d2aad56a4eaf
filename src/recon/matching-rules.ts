import rulesJson from "../../protocols/recon/matching-rules.json" with { type: "json" };
import { assert } from "../assert.ts";

export interface MatchingRule {
  name: string;
  strategy: "one-to-one" | "one-to-many" | "many-to-one";
  reference: "equals" | "contains";
  amount: { driftMinor: number };
  currency: "same";
  dateWindowDays: number;
}

export interface MatchingRules {
  version: string;
  rules: MatchingRule[];
  nearMatch: { reference: "equals"; dateWindowDays: number };
}

const strategies = new Set(["one-to-one", "one-to-many", "many-to-one"]);

/** The rules as data (protocols/recon/matching-rules.json), checked when loaded: a bad rule is a build mistake. */
export function loadMatchingRules(raw: unknown = rulesJson): MatchingRules {
  const rules = raw as MatchingRules;
  assert(typeof rules.version === "string" && rules.version.length > 0, "matching rules have a version");
  assert(Array.isArray(rules.rules) && rules.rules.length > 0, "matching rules list at least one rule");
  const names = new Set<string>();
  for (const rule of rules.rules) {
    assert(!names.has(rule.name), `matching rule ${rule.name} is named once`);
    names.add(rule.name);
    assert(strategies.has(rule.strategy), `matching rule ${rule.name}: strategy ${rule.strategy}`);
    assert(rule.reference === "equals" || rule.reference === "contains", `matching rule ${rule.name}: reference ${rule.reference}`);
    assert(Number.isInteger(rule.amount?.driftMinor) && rule.amount.driftMinor >= 0, `matching rule ${rule.name}: amount.driftMinor >= 0`);
    assert(Number.isInteger(rule.dateWindowDays) && rule.dateWindowDays >= 0 && rule.dateWindowDays <= 366, `matching rule ${rule.name}: dateWindowDays 0..366`);
  }
  assert(Number.isInteger(rules.nearMatch?.dateWindowDays) && rules.nearMatch.dateWindowDays >= 0, "nearMatch has a date window");
  return rules;
}

export const matchingRules = loadMatchingRules();

/** The widest date window any rule uses: how far outside the period a run must look. */
export function widestWindowDays(rules: MatchingRules): number {
  return Math.max(rules.nearMatch.dateWindowDays, ...rules.rules.map((r) => r.dateWindowDays));
}
