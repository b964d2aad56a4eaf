import type { FastifyInstance } from "fastify";
import type { Pool } from "../../db/pool.ts";
import { listLeases, type LeaseRow } from "../../fleet/index.ts";
import { findTenant } from "../../tenants/tenants.ts";
import { operatorOf } from "../operator-session.ts";
import { html } from "./html.ts";
import { shell } from "./shell.ts";

/**
 * Whether an operator of the tenant (by id and name) sees a lease: the fleet's own (jobs, the
 * scheme link, the JetStream inbox) and the file sources of the tenant; another tenant's folders
 * and partners are not its business.
 */
function visibleTo(lease: LeaseRow, tenant: { tenantId: string; name: string }): boolean {
  const source = /^(?:drop-folder|sftp):([^/]*)\//.exec(lease.leaseName);
  return source === null || source[1] === tenant.tenantId || source[1] === tenant.name;
}

function stateOf(lease: LeaseRow): string {
  if (lease.live) return "held";
  return lease.releasedAt === null ? "ran out" : "released";
}

/** Which process of the fleet holds what (docs/operations/fleet.md): the rows of fleet_lease. */
export function registerFleetPage(pages: FastifyInstance, deps: { pool: Pool }): void {
  pages.get("/console/fleet", async (request, reply) => {
    const tenantId = operatorOf(request).tenantId;
    const tenant = { tenantId, name: (await findTenant(deps.pool, tenantId))?.name ?? tenantId };
    const leases = (await listLeases(deps.pool)).filter((lease) => visibleTo(lease, tenant));
    const rows = leases.map((lease) => html`<tr data-lease="${lease.leaseName}"
      data-state="${stateOf(lease)}"><td>${lease.leaseName}</td><td>${lease.holder}</td>
      <td>${lease.holderAddress ?? ""}</td><td>${stateOf(lease)}</td>
      <td>${lease.acquiredAt.toISOString()}</td><td>${lease.leaseUntil.toISOString()}</td>
      <td class="num">${lease.token.toString()}</td><td>${lease.previousHolder ?? ""}</td></tr>`);
    return shell(request, reply, "Fleet", html`<p class="note">Each file source, singleton job and
      the scheme link runs on the process holding its lease; another takes it over when the holder
      stops renewing.</p><table id="leases"><tr><th>lease</th><th>holder</th><th>address</th>
      <th>state</th><th>since</th><th>until</th><th>token</th><th>held before by</th></tr>
      ${rows}</table>`);
  });
}
