/**
 * The record core, entered here (docs/decisions/0069): canonical records from every channel are
 * decided in the caller's transaction (key, fingerprint, typed outcome, posting, dedup record);
 * held records wait for a person's review decision. Its store (src/records/store/) is private:
 * other rooms read it through the functions below, named for what they answer.
 */
export { decideRecords, previewRecords, type Preview } from "./decide-records.ts";
export {
  appliedTransferKeyOf, originalRefOf, recordOutcomeOf,
  type Decision, type Outcome, type Rejected,
} from "./decision.ts";
export {
  recordOutcomes, zeroCounts, type KeyState, type OutcomeCounts, type RecordOutcome,
} from "./record-states.ts";
export { lockTenantIngestion } from "./tenant-lock.ts";
export { decideSameBytesRange } from "./same-bytes-file.ts";

// What a record went through, and the reviews of held records.
export {
  recordHistory, type HistoryEvent, type RecordHistory,
} from "./record-history.ts";
export {
  listReviews, listSuspensePostings, reviewItemsById, reviewQueue, reviewsPage,
  type ReviewItem, type ReviewPageQuery, type ReviewQueueItem, type StandingRecord,
} from "./review-queue.ts";
export {
  countCompensations, decideReviewInTransaction,
  type DecidedReview, type DecisionOutcome, type ReviewDecisionKind,
} from "./review-decision.ts";

// Reads of the record tables for other rooms' reports and decisions.
export {
  appliedRecordsOfFilePage, fileHoldsForwardRecord, outcomesOfFile, recordsDroppedByCorrection,
  rejectedRecordsOfFile, unresolvedCounterpartyPosting,
} from "./store/arrivals.ts";
export { fileRecordsPage, type FileRecordRow } from "./store/arrivals.ts";
export { tenantsHoldingKey } from "./store/history.ts";
// For the console's pictures: outcomes per day, open items by age.
export { openReviewAgeCounts, outcomesPerDay, type OutcomesOfDay } from "./store/charts.ts";
export { keyStatesByLinkId, storedKeysOf } from "./store/keys.ts";
