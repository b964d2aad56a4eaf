import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { limits } from "../config/limits.ts";

/**
 * The request a piece of work serves, for every log line written on its behalf (issue 33 item 7):
 * the logger adds `request_id` from here (src/observability/logger.ts), so a service's own lines
 * carry it as well as the HTTP adapter's.
 */
const requestStore = new AsyncLocalStorage<{ requestId: string }>();

export function runInRequest(requestId: string, work: () => void): void {
  requestStore.run({ requestId }, work);
}

export function currentRequestId(): string | undefined {
  return requestStore.getStore()?.requestId;
}

/** Visible ASCII a log and a header can carry as they are: letters, digits and . _ : - */
const REQUEST_ID = /^[A-Za-z0-9._:-]+$/;

/**
 * The caller's Request-Id when it is one well-formed value of at most requestIdCharsMax
 * characters; else a fresh UUID (a malformed one is not repaired: it would stop matching the
 * caller's logs anyway).
 */
export function requestIdFrom(header: string | string[] | undefined): string {
  if (typeof header === "string" && header.length <= limits.http.requestIdCharsMax
    && REQUEST_ID.test(header)) {
    return header;
  }
  return randomUUID();
}
