import type { z } from "zod";
import { fourEyesBody, opsDecisionBody, opsDifferenceDecisionBody, signInBody, suspenseMoveBody } from "./operations-schemas.ts";

const id = { name: "id", in: "path", required: true, schema: { type: "string" } };
const idempotencyKey = { name: "Idempotency-Key", in: "header", required: true, schema: { type: "string", minLength: 1, maxLength: 255 } };
const csrf = { name: "x-csrf-token", in: "header", required: true, description: "the session's CSRF token (sign-in answer, GET /v1/ops/session); a form sends csrf_token instead", schema: { type: "string" } };
const session = [{ session: [] }];
const raw = { required: true, content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } } };
const fileQuery = [{ name: "name", in: "query", required: true, schema: { type: "string" } }, { name: "partner", in: "query", schema: { type: "string" } }];
const answers = (ok: Record<string, string>, problems: Record<string, string> = {}) => Object.fromEntries(
  [...Object.entries(ok), ...Object.entries(problems)].map(([status, description]) => [status, { description }]),
);

/** /v1/files (API key; it was missing from the document) and /v1/ops/* (operators' session, docs/decisions/0026). */
export function operationsPaths(json: (schema: z.ZodType) => Record<string, unknown>): Record<string, unknown> {
  return {
    "/v1/files": {
      post: { summary: "Upload a file (raw body), receive and apply it; the key's repeat reports the same file", parameters: [...fileQuery, idempotencyKey], requestBody: raw, responses: answers({ "201": "the file's report", "200": "a repeat of the key: the same file's report" }, { "400": "no name, empty body, unknown partner", "413": "past httpUploadBytesMax", "422": "the key was used for other bytes" }) },
      get: { summary: "Received files", parameters: [{ name: "status", in: "query", schema: { type: "string", enum: ["received", "processing", "done", "rejected"] } }, { name: "limit", in: "query", schema: { type: "integer" } }], responses: answers({ "200": "{ files }" }) },
    },
    "/v1/files/{id}": { get: { summary: "A file's report and per-record outcomes", parameters: [id], responses: answers({ "200": "the report with record_outcomes" }, { "404": "no such file" }) } },
    "/v1/ops/session": {
      post: { summary: "Sign in with the secret `clearline operator add` printed; sets the HttpOnly, SameSite=Strict session cookie", security: [], requestBody: { required: true, content: json(signInBody) }, responses: answers({ "200": "{ operator, role, tenant_id, csrf_token, expires_at }" }, { "401": "no such tenant, operator or secret" }) },
      get: { summary: "The signed-in operator and the session's CSRF token", security: session, responses: answers({ "200": "{ operator, role, tenant_id, csrf_token, expires_at }" }, { "401": "no session" }) },
      delete: { summary: "Sign out", security: session, parameters: [csrf], responses: answers({ "204": "signed out; the cookie is cleared" }) },
    },
    "/v1/ops/four-eyes": { put: { summary: "Set the tenant's four-eyes amount (admin)", security: session, parameters: [csrf], requestBody: { required: true, content: json(fourEyesBody) }, responses: answers({ "200": "the amount" }, { "403": "not an admin, or no CSRF token" }) } },
    "/v1/ops/reviews": { get: { summary: "The tenant's review queue", security: session, parameters: [{ name: "state", in: "query", schema: { type: "string" } }], responses: answers({ "200": "{ reviews }" }) } },
    "/v1/ops/reviews/{id}/decision": { post: { summary: "Decide a held record (decision 0011's meanings); above the four-eyes amount, propose it instead", security: session, parameters: [id, csrf, idempotencyKey], requestBody: { required: true, content: json(opsDecisionBody) }, responses: answers({ "200": "the recorded decision, with the operator", "202": "{ proposal }: waits for a second approver; nothing posted" }, { "403": "a viewer, or no CSRF token", "404": "no such review", "409": "decided otherwise, or a proposal is open", "422": "insufficient funds or not applicable" }) } },
    "/v1/ops/proposals": { get: { summary: "Proposals of the tenant, open and decided", security: session, responses: answers({ "200": "{ proposals }" }) } },
    "/v1/ops/proposals/{id}/approval": { post: { summary: "Approve another operator's proposal: runs its decision", security: session, parameters: [id, csrf, idempotencyKey], responses: answers({ "200": "the decision, recording both operators" }, { "403": "the proposer, a viewer, or no CSRF token", "404": "no such proposal", "409": "already approved" }) } },
    "/v1/ops/suspense": { get: { summary: "Records posted to suspense because no alias matched", security: session, responses: answers({ "200": "{ postings }" }) } },
    "/v1/ops/suspense/moves": { post: { summary: "Move a suspense posting to the account it belongs to (transfer <posting key>:suspense-move); four eyes above the amount", security: session, parameters: [csrf, idempotencyKey], requestBody: { required: true, content: json(suspenseMoveBody) }, responses: answers({ "200": "{ suspense_move }", "202": "{ proposal }" }, { "404": "no such suspense posting", "409": "moved to another account already", "422": "funds or currency" }) } },
    "/v1/ops/accounts": { get: { summary: "The tenant's accounts with balances", security: session, responses: answers({ "200": "{ accounts }" }) } },
    "/v1/ops/accounts/{id}/statement": { get: { summary: "An account's entries with their origins, corrections marked", security: session, parameters: [id, { name: "limit", in: "query", schema: { type: "integer" } }], responses: answers({ "200": "the statement" }, { "404": "no such account" }) } },
    "/v1/ops/files": {
      get: { summary: "Received files", security: session, parameters: [{ name: "status", in: "query", schema: { type: "string" } }], responses: answers({ "200": "{ files }" }) },
      post: { summary: "Confirm a re-upload: receive and apply the file", security: session, parameters: [...fileQuery, csrf, idempotencyKey], requestBody: raw, responses: answers({ "201": "the file's report", "200": "a repeat of the key" }, { "403": "a viewer, or no CSRF token" }) },
    },
    "/v1/ops/files/preview": { post: { summary: "What the file would do, record by record (new, already applied, changed with both amounts, rejected, dropped); stores nothing", security: session, parameters: [...fileQuery, csrf], requestBody: raw, responses: answers({ "200": "the dry-run report" }, { "403": "a viewer, or no CSRF token" }) } },
    "/v1/ops/files/{id}": { get: { summary: "A file's report and per-record outcomes", security: session, parameters: [id], responses: answers({ "200": "the report" }, { "404": "no such file" }) } },
    "/v1/ops/differences": { get: { summary: "Open reconciliation differences by reason: theirs_only first, then the oldest first", security: session, parameters: [{ name: "account", in: "query", schema: { type: "string" } }], responses: answers({ "200": "{ by_reason, differences }" }) } },
    "/v1/ops/differences/{id}/correct": { post: { summary: "Correct a difference: posts transfer recon:<id> against recon suspense, the operator recorded as decider; refused above the four-eyes amount (docs/decisions/0031)", security: session, parameters: [id, csrf, idempotencyKey], requestBody: { required: true, content: json(opsDifferenceDecisionBody) }, responses: answers({ "200": "the difference, corrected" }, { "403": "a viewer, no CSRF token, or above the four-eyes amount", "404": "no such difference", "409": "decided otherwise already", "422": "moves no money: explain it" }) } },
    "/v1/ops/differences/{id}/explain": { post: { summary: "Explain a difference: closes it with the reason, no money moves", security: session, parameters: [id, csrf, idempotencyKey], requestBody: { required: true, content: json(opsDifferenceDecisionBody) }, responses: answers({ "200": "the difference, explained" }, { "403": "a viewer, or no CSRF token", "404": "no such difference", "409": "decided otherwise already" }) } },
    "/v1/ops/outbox/dead-letters": { get: { summary: "The tenant's dead letters, the newest first, and the service-wide age of the oldest undelivered message", security: session, responses: answers({ "200": "{ dead_letters, oldest_undelivered_age_seconds }" }) } },
    "/v1/ops/outbox/{id}/retry": { post: { summary: "Make a dead letter due again with a fresh attempt budget", security: session, parameters: [id, csrf, idempotencyKey], responses: answers({ "200": "{ retried, by }" }, { "403": "a viewer, or no CSRF token", "404": "no such message", "409": "not a dead letter" }) } },
    "/v1/ops/incidents": { get: { summary: "The tenant's incidents, the newest first", security: session, responses: answers({ "200": "{ incidents }" }) } },
    "/v1/ops/incidents/{id}": { get: { summary: "An incident: its perimeter as taken and every compensation decided", security: session, parameters: [id], responses: answers({ "200": "the incident" }, { "404": "no such incident" }) } },
  };
}
