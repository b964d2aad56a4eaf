import { limits } from "../../config/limits.ts";
import { fail, finding, ok, type Finding, type Result } from "../../errors/finding.ts";

/** An endpoint as a person asks for it: its URL and the event types it takes. */
export interface WebhookRequest { url: string; eventTypes: string[] }

/**
 * Reads an endpoint request as the CLI's `webhook add` and the console's form take it: an
 * http(s) URL and 1 to webhookEventTypesMax event types like payment.applied, comma-separated.
 */
export function readWebhookRequest(
  url: string, eventsText: string,
): Result<WebhookRequest, Finding> {
  if (!/^https?:\/\/[^\s]+$/.test(url)) {
    return fail(finding("WEBHOOK_URL_INVALID", `${url} is not an http(s) URL`, { field: "url" }));
  }
  const named = eventsText.split(",").map((e) => e.trim()).filter((e) => e !== "");
  const eventTypes = [...new Set(named)];
  const max = limits.outbox.webhookEventTypesMax;
  if (eventTypes.length === 0 || eventTypes.length > max
    || eventTypes.some((e) => !/^[a-z0-9]+(\.[a-z0-9-]+)+$/.test(e))) {
    const detail = `give 1 to ${max} event types like payment.applied`;
    return fail(finding("WEBHOOK_EVENTS_INVALID", detail, { field: "events" }));
  }
  return ok({ url, eventTypes });
}
