import type { Candidate, OutcomesSoFar, RecordContext } from "../decision.ts";
import type { KeyStateChange } from "../store/keys.ts";

/**
 * Dedup marks whose state is not what the claim assumed. A changed record is held for a person
 * when it came in a file; a request's caller is told, so its mark says refused.
 */
export function keyStatesOf(
  context: RecordContext, fresh: ReadonlySet<Candidate>, outcomes: OutcomesSoFar,
): KeyStateChange[] {
  const held = context.arrival.kind === "file" ? "held" : "refused";
  const states: KeyStateChange[] = [];
  for (const candidate of fresh) {
    const naturalKey = candidate.record.naturalKey;
    const outcome = outcomes.of(candidate);
    const posts = candidate.rule.action === "post";
    if (outcome?.kind === "suspect" || (outcome?.kind === "conflict" && posts)) {
      states.push({ naturalKey, state: held, transferKey: null, matchedKey: null });
    } else if (outcome?.kind === "linked") {
      states.push({ naturalKey, state: "applied", transferKey: null, matchedKey: outcome.legOf });
    } else if (outcome?.kind === "rejected" && posts) {
      states.push({ naturalKey, state: "rejected", transferKey: null, matchedKey: null });
    }
  }
  return states;
}
