import type { Queryable } from "../../db/pool.ts";
import { fail, finding, ok, type Finding, type Result } from "../../errors/finding.ts";
import { enqueueOutbox } from "../outbox-store.ts";
import { WEBHOOK_DESTINATION_PREFIX } from "./webhook-deliverer.ts";
import { webhookEndpointState } from "./webhook-store.ts";

export const WEBHOOK_TEST_EVENT_TYPE = "webhook.test";

/**
 * A test event for one endpoint (docs/decisions/0106): one outbox row of type webhook.test,
 * signed and delivered like any event, keyed `test:<key>` by the request that asked for it, so a
 * repeated request is one event. It names nothing of the tenant's money. Only an active endpoint
 * takes one.
 */
export async function sendWebhookTestEvent(
  db: Queryable,
  input: { tenantId: string; endpointId: string; requestKey: string; sentBy: string },
): Promise<Result<{ messageKey: string }, Finding>> {
  const state = await webhookEndpointState(db, input.tenantId, input.endpointId);
  if (state === undefined) {
    const detail = `no webhook endpoint ${input.endpointId}`;
    return fail(finding("WEBHOOK_ENDPOINT_UNKNOWN", detail, { field: "endpoint_id" }));
  }
  if (state === "disabled") {
    const detail = `${input.endpointId} is disabled: enable it first`;
    return fail(finding("WEBHOOK_ENDPOINT_NOT_ACTIVE", detail, { field: "endpoint_id" }));
  }
  const messageKey = `test:${input.requestKey}`;
  await enqueueOutbox(db, {
    tenantId: input.tenantId, destination: `${WEBHOOK_DESTINATION_PREFIX}${input.endpointId}`,
    messageType: WEBHOOK_TEST_EVENT_TYPE, messageKey,
    payload: { endpoint_id: input.endpointId, sent_by: input.sentBy, test: true },
  });
  return ok({ messageKey });
}
