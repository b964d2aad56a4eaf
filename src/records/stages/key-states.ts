import type { Candidate, RecordContext } from "../decision.ts";
import type { KeyStateChange } from "../store/keys.ts";

/**
 * Dedup marks whose state is not what the claim assumed. A changed record is held for a person
 * when it came in a file; a request's caller is told, so its mark says refused.
 */
export function keyStatesOf(context: RecordContext, fresh: Set<Candidate>): KeyStateChange[] {
  const held = context.arrival.kind === "file" ? "held" : "refused";
  const states: KeyStateChange[] = [];
  for (const decision of fresh) {
    const naturalKey = decision.record.naturalKey;
    if (decision.outcome === "suspect" || (decision.outcome === "conflict" && decision.rule.action === "post")) {
      states.push({ naturalKey, state: held, transferKey: null, matchedKey: null });
    } else if (decision.legOf !== undefined) {
      states.push({ naturalKey, state: "applied", transferKey: null, matchedKey: decision.legOf });
    } else if (decision.outcome === "rejected" && decision.rule.action === "post") {
      states.push({ naturalKey, state: "rejected", transferKey: null, matchedKey: null });
    }
  }
  return states;
}
