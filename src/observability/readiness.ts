import { limits } from "../config/limits.ts";

/** One readiness check's verdict: ok, or the reason it is not (what an operator reads first). */
export interface CheckResult {
  ok: boolean;
  reason?: string;
}

export interface ReadinessCheck {
  name: string;
  check(): Promise<CheckResult> | CheckResult;
}

export interface ReadinessReport {
  status: "ready" | "not_ready";
  checks: Record<string, CheckResult>;
}

async function bounded(check: ReadinessCheck): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, reason: `no answer within ${limits.http.readinessCheckTimeoutMs} ms` }), limits.http.readinessCheckTimeoutMs);
  });
  try {
    return await Promise.race([Promise.resolve().then(() => check.check()), timedOut]);
  } catch (error) {
    return { ok: false, reason: error instanceof Error && error.message !== "" ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs every check at once, each bounded in time; ready only when every one is ok. */
export async function evaluateReadiness(checks: ReadinessCheck[]): Promise<ReadinessReport> {
  const results = await Promise.all(checks.map(async (check) => [check.name, await bounded(check)] as const));
  return { status: results.every(([, result]) => result.ok) ? "ready" : "not_ready", checks: Object.fromEntries(results) };
}
