import { z } from "zod";
import { limits } from "../config/limits.ts";
import { accountKinds, type AccountKind } from "../ledger/index.ts";
import { accountId, clientReference, currencyCode as currency, decimalAmount } from "../payments/payment-request.ts";

/**
 * The published request contract, one zod schema per body: validation and /openapi.json both
 * come from here, so the documentation cannot drift from what the server accepts. Amounts are
 * decimal strings ("10.00"): a JSON number would pass through a float. The payment body and the
 * fields it shares with the others are the payment service's (src/payments/payment-request.ts):
 * every channel of a payment instruction reads it, not only HTTP.
 */
export const refundBody = z.strictObject({
  client_reference: clientReference,
  payment_id: z.string().min(1).max(64).optional(),
  payment_client_reference: clientReference.optional(),
  amount: decimalAmount,
  currency: currency.optional(),
}).refine((body) => (body.payment_id === undefined) !== (body.payment_client_reference === undefined), {
  message: "name the payment by exactly one of payment_id and payment_client_reference",
  path: ["payment_id"],
});

export const accountBody = z.strictObject({
  id: accountId,
  kind: z.enum(["customer", "settlement", "suspense"]),
  currency,
});

export const reviewDecisionBody = z.strictObject({
  decision: z.enum(["replace", "apply_as_new", "refuse"]).describe("replace: the record corrects the original (compensated); apply_as_new: a separate payment; refuse: nothing posted (docs/decisions/0011)"),
  reason: z.string().trim().min(1).max(limits.http.reviewReasonCharsMax).describe("why: kept with the decision"),
  operator: z.string().trim().min(1).max(limits.http.operatorCharsMax).describe("who decides"),
});

export const reviewQuery = z.strictObject({
  state: z.enum(["open", "released", "replaced", "applied_as_new", "refused", "all"]).default("open"),
});

export const statementQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(limits.ledger.statementEntriesMax).default(limits.ledger.statementEntriesMax),
});

/**
 * GET /v1/accounts/{id}/balance: without either parameter, today's exact balance as before;
 * with one, the balance of that kind on that date (docs/decisions/0102; as_of defaults to the
 * current UTC date, kind to booked). Checked further by the ledger (a real date, a known kind).
 */
export const balanceQuery = z.strictObject({
  as_of: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "a date written YYYY-MM-DD").optional(),
  kind: z.enum(["booked", "settled", "available"]).optional(),
});

/** GET /v1/accounts: a page of accounts, optionally of one kind, after a cursor. */
export const accountListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(limits.ledger.accountsPageMax)
    .default(limits.ledger.accountsPageDefault),
  cursor: z.string().min(1).max(limits.http.pageCursorCharsMax).optional(),
  kind: z.enum(Object.keys(accountKinds) as [AccountKind, ...AccountKind[]]).optional(),
});

/** POST /v1/reconciliations/runs */
export const reconRunBody = z.object({ account: z.string().min(1).max(200), from: z.string(), to: z.string(), dry_run: z.boolean().optional() }).strict();

/** POST /v1/reconciliations/differences/{id}/correct|explain: who decided, and why (kept with the decision). */
export const reconDecisionBody = z.object({ reason: z.string().min(1).max(2_000), operator: z.string().min(1).max(200) }).strict();
