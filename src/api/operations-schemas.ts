import { z } from "zod";
import { limits } from "../config/limits.ts";

/** Bodies and queries of the operations API (/v1/ops/*), signed-in operators only. */
export const signInBody = z.strictObject({
  tenant: z.string().min(1).max(100).describe("tenant name or id"),
  name: z.string().min(1).max(limits.http.operatorCharsMax).describe("operator name"),
  secret: z.string().min(1).max(200).describe("the secret `clearline operator add` printed"),
});

export const opsDecisionBody = z.strictObject({
  decision: z.enum(["replace", "apply_as_new", "refuse"]),
  reason: z.string().trim().min(1).max(limits.http.reviewReasonCharsMax).describe("why: kept with the decision"),
  csrf_token: z.string().optional().describe("for form posts; API clients send x-csrf-token"),
});

export const opsApprovalBody = z.strictObject({
  csrf_token: z.string().optional(),
}).optional();

export const opsCancelBody = z.strictObject({
  reason: z.string().trim().min(1).max(limits.http.reviewReasonCharsMax).describe("why the proposal is withdrawn or declined: kept with it"),
  csrf_token: z.string().optional(),
});

export const fourEyesBody = z.strictObject({
  above_amount_minor: z.string().regex(/^\d{1,18}$/).describe("decisions on amounts above this need a second approver"),
  csrf_token: z.string().optional(),
});

export const suspenseMoveBody = z.strictObject({
  posting_key: z.string().min(1).max(512).describe("the transfer key of the record posted to suspense (GET /v1/ops/suspense)"),
  to_account: z.string().min(1).max(limits.http.accountIdCharsMax).describe("the account the money belongs to"),
  reason: z.string().trim().min(1).max(limits.http.reviewReasonCharsMax),
  csrf_token: z.string().optional(),
});

export const opsDifferenceDecisionBody = z.strictObject({
  reason: z.string().trim().min(1).max(limits.http.reviewReasonCharsMax).describe("why: kept with the difference as its decision reason"),
  csrf_token: z.string().optional(),
});

export const opsRetryBody = z.strictObject({
  csrf_token: z.string().optional(),
}).optional();

/** GET /v1/ops/settlements: a partner's expected settlement totals on a date (issue 30 item 5). */
export const settlementTotalsQuery = z.strictObject({
  partner: z.string().min(1).max(100).describe("partner name or id"),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "a date written YYYY-MM-DD")
    .describe("the settlement date"),
});
