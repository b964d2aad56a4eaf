import type { Command } from "commander";
import { limits } from "../../config/limits.ts";
import { configOrExit } from "../context.ts";
import { exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";

interface CheckResult {
  ok: boolean;
  reason?: string;
}

/** A lease of the fleet as /fleet shows it (src/api/routes/fleet.ts). */
interface LeaseView {
  lease: string;
  holder: string;
  holder_address: string | null;
  held_here: boolean;
  live: boolean;
  token: string;
  since: string;
  until: string;
  released_at: string | null;
}

interface StatusView {
  url: string;
  live: boolean;
  status: "ready" | "not_ready" | "unreachable";
  checks: Record<string, CheckResult>;
  /** Which process of the fleet holds each file source, singleton job and the scheme link. */
  leases?: LeaseView[];
  reason?: string;
}

/** Asks a running `clearline serve` what its /livez, /readyz and /fleet answer. */
async function statusOf(url: string, timeoutMs: number): Promise<StatusView> {
  try {
    const live = await fetch(`${url}/livez`, { signal: AbortSignal.timeout(timeoutMs) });
    const ready = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(timeoutMs) });
    const body = await ready.json() as { status?: string; checks?: Record<string, CheckResult> };
    const status = body.status === "ready" && ready.ok ? "ready" : "not_ready";
    const view: StatusView = { url, live: live.ok, status, checks: body.checks ?? {} };
    // The leases are the database's: a service whose database is gone shows none.
    const fleet = await fetch(`${url}/fleet`, { signal: AbortSignal.timeout(timeoutMs) })
      .catch(() => undefined);
    if (fleet?.ok) view.leases = ((await fleet.json()) as { leases: LeaseView[] }).leases;
    return view;
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
        printLeases(view.leases);
      }
      if (view.status !== "ready") process.exitCode = exitCodes.failure;
    });
}

/** Each lease: who holds it (this process or another, by its address), since, until, token. */
function printLeases(leases: LeaseView[] | undefined): void {
  if (leases === undefined || leases.length === 0) return;
  printLine("leases (which process runs what):");
  for (const lease of leases) {
    const where = lease.held_here ? "this process" : lease.holder_address ?? "address unknown";
    const state = lease.live ? `held by ${lease.holder} (${where})`
      : lease.released_at ? `released by ${lease.holder}` : `ran out, last held by ${lease.holder}`;
    const times = `since ${lease.since}, until ${lease.until}, token ${lease.token}`;
    printLine(`  ${lease.lease}: ${state}, ${times}`);
  }
}
