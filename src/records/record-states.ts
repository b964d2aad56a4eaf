/**
 * The record core's states, listed once. The SQL check constraints of the record tables list
 * the same values (migrations 0003, 0008, 0032); test/records/record-states.test.ts holds the
 * two equal.
 */

/** What one arrival of a record came to. */
export const recordOutcomes = ["applied", "duplicate", "conflict", "suspect", "rejected", "orphan"] as const;
export type RecordOutcome = (typeof recordOutcomes)[number];
export type OutcomeCounts = Record<RecordOutcome, number>;

export function zeroCounts(): OutcomeCounts {
  return { applied: 0, duplicate: 0, conflict: 0, suspect: 0, rejected: 0, orphan: 0 };
}

/**
 * Where a natural key stands after every arrival so far: `applied` (posted or recorded), `held`
 * (waiting for a person), `orphan` (a return waiting for its original), `rejected` (refused at
 * posting: funds), `refused` (a person refused it, or the channel refused it to its caller),
 * `replaced` (its posting was compensated by a review's replacement).
 */
export const keyStates = ["applied", "held", "orphan", "rejected", "refused", "replaced"] as const;
export type KeyState = (typeof keyStates)[number];

/** A review item: open until a person decides it (`released` only on rows from before decisions existed). */
export const reviewStates = ["open", "released", "replaced", "applied_as_new", "refused"] as const;
export type ReviewState = (typeof reviewStates)[number];

/** Why a record waits for a person (record_review.reason; late_return: decision 0094). */
export const reviewReasons = ["conflict", "suspect", "late_return"] as const;
export type ReviewReason = (typeof reviewReasons)[number];
