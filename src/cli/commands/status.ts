import type { Command } from "commander";
import { limits } from "../../config/limits.ts";
import { configOrExit } from "../context.ts";
import { exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";

interface CheckResult {
  ok: boolean;
  reason?: string;
}

interface StatusView {
  url: string;
  live: boolean;
  status: "ready" | "not_ready" | "unreachable";
  checks: Record<string, CheckResult>;
  reason?: string;
}

/** Asks a running `clearline serve` the same questions as its /livez and /readyz. */
async function statusOf(url: string, timeoutMs: number): Promise<StatusView> {
  try {
    const live = await fetch(`${url}/livez`, { signal: AbortSignal.timeout(timeoutMs) });
    const ready = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(timeoutMs) });
    const body = await ready.json() as { status?: string; checks?: Record<string, CheckResult> };
    return { url, live: live.ok, status: body.status === "ready" && ready.ok ? "ready" : "not_ready", checks: body.checks ?? {} };
  } catch (error) {
    return { url, live: false, status: "unreachable", checks: {}, reason: `no clearline answers at ${url}: ${error instanceof Error ? error.message : String(error)} (is clearline serve running? --url names another)` };
  }
}

export function registerStatusCommand(program: Command): void {
  program
    .command("status")
    .description("is the running service live and ready? each readiness check, with the reason of those failing")
    .option("--url <url>", "the service's HTTP address (default: CLEARLINE_HTTP_HOST and CLEARLINE_HTTP_PORT)")
    .option("--json", "machine-readable output")
    .action(async (options: { url?: string; json?: boolean }) => {
      const config = configOrExit();
      const url = (options.url ?? `http://${config.httpHost}:${config.httpPort}`).replace(/\/+$/, "");
      const view = await statusOf(url, limits.http.statusRequestTimeoutMs);
      if (options.json) printJson(view);
      else {
        printLine(`${view.status.replace("_", " ")} (${url})`);
        if (view.reason) printLine(`  ${view.reason}`);
        for (const [name, result] of Object.entries(view.checks)) printLine(`  ${result.ok ? "ok     " : "FAILING"} ${name}${result.reason ? `: ${result.reason}` : ""}`);
      }
      if (view.status !== "ready") process.exitCode = exitCodes.failure;
    });
}
