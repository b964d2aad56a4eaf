import { checkAnswered, startSpan } from "./progress.ts";
import type { World } from "./world.ts";
import { simBounds } from "./bounds.ts";

export type HttpOutcome =
  | { kind: "answer"; status: number; json: any; replayed: boolean } // eslint-disable-line @typescript-eslint/no-explicit-any
  | { kind: "unknown"; error: string };

/**
 * One HTTP request of a simulated client. No answer (connection reset by a kill -9, timeout) is
 * the third outcome, unknown: the client does not know whether the effect happened.
 */
export async function httpCall(baseUrl: string, apiKey: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpOutcome> {
  try {
    const isRaw = Buffer.isBuffer(body);
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { "content-type": isRaw ? "application/octet-stream" : "application/json" }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: isRaw ? new Uint8Array(body) : JSON.stringify(body) }),
      signal: AbortSignal.timeout(simBounds.requestTimeoutMs),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = { raw: text };
    }
    return { kind: "answer", status: response.status, json, replayed: response.headers.get("idempotent-replayed") === "true" };
  } catch (error) {
    return { kind: "unknown", error: (error as Error).message };
  }
}

/**
 * A request of a simulated client to the live service (its base URL and the tenant's key): a
 * 5xx or no answer while no fault of the run was open is recorded as a broken promise.
 */
export async function serviceCall(ctx: { world: World; service: { baseUrl: string } }, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpOutcome> {
  const span = startSpan(ctx.world);
  const outcome = await httpCall(ctx.service.baseUrl, ctx.world.apiKey, method, path, body, headers);
  checkAnswered(ctx.world, `${method} ${path.split("?")[0]}`, outcome, span);
  return outcome;
}
