import type { ErrorCode } from "../errors/catalog.ts";
import { problem } from "../errors/problem.ts";

/**
 * A response as an idempotency record stores it for replay: status and the exact body bytes. The
 * HTTP routes send it as it is; the JetStream inbox publishes its status and body as the outcome.
 */
export interface Reply {
  status: number;
  body: string;
  contentType: string;
  effectRef: string | null;
}

/** JSON has no bigint: minor-unit amounts travel as decimal strings of integers ("12500"). */
function bigintAsString(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}

export function jsonReply(status: number, value: unknown, effectRef: string | null = null): Reply {
  return { status, body: JSON.stringify(value, bigintAsString), contentType: "application/json; charset=utf-8", effectRef };
}

export function problemReply(code: ErrorCode, detail: string, extensions: Record<string, unknown> = {}, effectRef: string | null = null): Reply {
  const body = problem(code, detail, extensions);
  return { status: body.status, body: JSON.stringify(body), contentType: "application/problem+json; charset=utf-8", effectRef };
}
