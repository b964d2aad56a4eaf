import type { SimContext } from "../sim/context.ts";
import type { Violation } from "../sim/invariants.ts";
import { soakBounds } from "./bounds.ts";
import { filesWaitingOnSftp } from "./sftp-partner.ts";
import type { SoakTopology } from "./topology.ts";

/**
 * After a heal, the service must catch up within `soakBounds.recoveryBoundMs`: every fleet lease
 * live and renewed since the heal (a lease lost to the fault, or still a killed process's, is
 * taken again: until then its work, the scheme link among them, runs nowhere), ready again (its
 * /readyz covers the database, the file sources and the scheme link), answering the API, the
 * outbox drained of what was enqueued before the heal, the partner's SFTP inbox taken (the source
 * polls again), no received file unfinished, no outbound reversal pending. Time to recover runs from the heal to the moment all of that held.
 */
export interface Recovery {
  recoveredMs: number;
  violations: Violation[];
  /** The condition that took longest to hold, and how long it took (a slow recovery's why). */
  slowest: { name: string; ms: number } | undefined;
}

type Condition = { name: string; holds: () => Promise<string | undefined> };   // undefined: holds; else what is still wrong

async function get(url: string): Promise<number | string> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(soakBounds.probeTimeoutMs) });
    const text = await response.text();
    return response.status === 200 ? 200 : `${response.status} ${text.slice(0, 300)}`;
  } catch (error) {
    return (error as Error).message;
  }
}

function conditions(ctx: SimContext, healedAt: Date, topology: SoakTopology): Condition[] {
  const { pool, world } = ctx;
  const count = async (sql: string, values: unknown[]) => (await pool.query<{ n: number }>(sql, values)).rows[0]?.n ?? 0;
  return [
    {
      name: "leases held since the heal",
      // A lease let go by a graceful stop (the soak's restart with config.json) is nobody's work.
      holds: async () => {
        const { rows } = await pool.query<{ lease_name: string }>(
          `SELECT lease_name FROM fleet_lease
            WHERE released_at IS NULL AND (lease_until <= clock_timestamp() OR renewed_at < $1)
            ORDER BY lease_name`, [healedAt]);
        const names = rows.map((row) => row.lease_name);
        return names.length === 0 ? undefined : `not live or not renewed since: ${names.join(", ")}`;
      },
    },
    { name: "ready (/readyz 200)", holds: async () => { const r = await get(`${ctx.service.baseUrl}/readyz`); return r === 200 ? undefined : String(r); } },
    {
      name: "answering (GET balance 200)",
      holds: async () => {
        try {
          const response = await fetch(`${ctx.service.baseUrl}/v1/accounts/${world.merchant}/balance`, {
            headers: { authorization: `Bearer ${world.apiKey}` }, signal: AbortSignal.timeout(soakBounds.probeTimeoutMs) });
          await response.text();
          return response.status === 200 ? undefined : `answered ${response.status}`;
        } catch (error) {
          return (error as Error).message;
        }
      },
    },
    {
      name: "outbox drained",
      holds: async () => {
        const n = await count(`SELECT count(*)::int AS n FROM outbox_message WHERE tenant_id = $1 AND state IN ('pending', 'delivering') AND created_at < $2`, [world.tenantId, healedAt]);
        return n === 0 ? undefined : `${n} messages enqueued before the heal not delivered`;
      },
    },
    {
      name: "SFTP inbox taken (files put before the heal)",
      holds: async () => {
        const waiting = filesWaitingOnSftp(topology, healedAt);
        if (waiting.length === 0) return undefined;
        // serve's last word on SFTP, where it said one (its log tail is kept by ServiceProcess).
        const said = ctx.service.recentStderr.split("\n").filter((l) => /sftp/i.test(l)).at(-1);
        return `still on the SFTP server: ${waiting.join(", ")}${said ? `; serve said: ${said}` : ""}`;
      },
    },
    {
      name: "files done",
      holds: async () => {
        const n = await count(`SELECT count(*)::int AS n FROM received_file WHERE tenant_id = $1 AND status IN ('received', 'processing')`, [world.tenantId]);
        return n === 0 ? undefined : `${n} files unfinished`;
      },
    },
    {
      name: "pending reversals acknowledged",
      holds: async () => {
        const n = await count(`SELECT count(*)::int AS n FROM iso8583_outbound WHERE tenant_id = $1 AND reversal_state = 'pending'`, [world.tenantId]);
        return n === 0 ? undefined : `${n} outbound reversals pending`;
      },
    },
  ];
}

export async function recover(
  ctx: SimContext, healedAtMs: number, topology: SoakTopology,
): Promise<Recovery> {
  const deadline = healedAtMs + soakBounds.recoveryBoundMs;
  const violations: Violation[] = [];
  let slowest: Recovery["slowest"];
  for (const condition of conditions(ctx, new Date(healedAtMs), topology)) {
    const conditionStartedMs = Date.now();
    for (;;) {
      const wrong = await condition.holds();
      if (wrong === undefined) break;
      if (!ctx.service.running) {
        violations.push({ invariant: "serveSurvivesFaults", subject: "clearline serve", expected: "running (only the soak kills it)",
          found: `${ctx.service.exitDescription}; its last output: ${ctx.service.recentStderr.slice(-1_500)}` });
        await ctx.service.start();   // as a supervisor would; the violation stands
        continue;
      }
      if (Date.now() > deadline) {
        violations.push({ invariant: "recoversAfterHeal", subject: condition.name, expected: `within ${soakBounds.recoveryBoundMs} ms of the heal`, found: wrong });
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, soakBounds.probePauseMs));
    }
    const tookMs = Date.now() - conditionStartedMs;
    if (slowest === undefined || tookMs > slowest.ms) slowest = { name: condition.name, ms: tookMs };
  }
  const dead = await ctx.pool.query<{ id: string; destination: string; last_error: string | null }>(
    "SELECT id::text, destination, last_error FROM outbox_message WHERE tenant_id = $1 AND state = 'dead' ORDER BY id", [ctx.world.tenantId]);
  for (const row of dead.rows) {
    violations.push({ invariant: "outboxNothingDead", subject: `outbox message ${row.id} to ${row.destination}`, expected: "delivered (its peer came back)", found: `dead: ${row.last_error ?? ""}` });
  }
  return { recoveredMs: Date.now() - healedAtMs, violations, slowest };
}
