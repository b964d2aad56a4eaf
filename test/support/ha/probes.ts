import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { haLimits } from "./limits.ts";

/** What a failed wait says: the event it waited for, how long, and the last probe's error. */
export class WaitTimeout extends Error {
  constructor(
    readonly what: string,
    readonly boundMs: number,
    readonly lastError: string | undefined,
  ) {
    const when = boundMs > 0 ? `not within ${boundMs / 1000} s` : "cannot happen";
    super(`${what}: ${when}${lastError ? ` (${lastError})` : ""}`);
  }
}

/** Thrown by a probe that knows the event can no longer happen (the process that would make it
 * happen exited): the wait ends at once instead of at its bound. */
export class WaitAborted extends Error {}

/**
 * Polls `probe` until it returns a value (not undefined), at most `boundMs`. A probe that throws
 * counts as "not yet", its message kept for the failure; one that throws WaitAborted ends it.
 */
export async function waitFor<T>(
  what: string,
  boundMs: number,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + boundMs;
  let lastError: string | undefined;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      if (error instanceof WaitAborted) throw new WaitTimeout(what, 0, error.message);
      lastError = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() >= deadline) throw new WaitTimeout(what, boundMs, lastError);
    await sleep(haLimits.pollIntervalMs);
  }
}

export async function getJson<T>(url: string): Promise<{ status: number; body: T }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(haLimits.probeTimeoutMs) });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** One connection, one statement, closed again; bounded by the probe timeout. */
export async function queryOnce<R extends pg.QueryResultRow>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: haLimits.probeTimeoutMs,
    query_timeout: haLimits.probeTimeoutMs,
  });
  // A dropped connection is reported by the query it breaks; this keeps it from being unhandled.
  client.on("error", () => undefined);
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen({ host: "127.0.0.1", port, exclusive: true }, () => {
      server.close(() => resolve(true));
    });
  });
}

export function logTail(file: string, lines: number = haLimits.logTailLines): string {
  if (!existsSync(file)) return `(no log at ${file})`;
  const all = readFileSync(file, "utf8").trimEnd().split("\n");
  return [`--- last ${Math.min(lines, all.length)} lines of ${file}`, ...all.slice(-lines)].join(
    "\n",
  );
}
