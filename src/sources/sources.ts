import { chmod, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { limits } from "../config/limits.ts";
import type { Pool } from "../db/pool.ts";
import type { Logger } from "../observability/logger.ts";
import { repeatedFailureLog } from "../observability/repeated-failure-log.ts";
import { createTenant, findTenant } from "../tenants/tenants.ts";
import { DropFolder } from "./drop-folder.ts";
import { createPartner, findPartner, type Partner } from "../partners/partners.ts";
import { refreshIngestGauges } from "../files/pipeline.ts";
import type { ReceiptFence } from "../files/receipt.ts";
import type { IngestSettings, SftpPartnerSource } from "../config/sources-config.ts";
import { partnerCalendar } from "../config/partner-calendar-config.ts";
import { SftpPoller } from "./sftp.ts";

export interface IngestSources {
  /** Where files can be dropped, for the start-up message. */
  dropFolders: Array<{ path: string; tenant: string; partner: string }>;
  /** Every SFTP partner this process polls (its last poll succeeded), or why those are not. */
  health(): { ok: boolean; reason?: string };
  /** Stops the gauges; the sources themselves stop with their leases. */
  stop(): Promise<void>;
}

/**
 * Zero configuration: a tenant and a partner named "default" (created on first start; the
 * tenant's API key is written once to CLEARLINE_HOME/default-tenant-api-key, mode 0600).
 */
async function ensureDefaults(pool: Pool, home: string, logger: Logger): Promise<void> {
  let tenant = await findTenant(pool, "default");
  if (!tenant) {
    const created = await createTenant(pool, "default");
    if (created.ok) {
      const keyFile = path.join(home, "default-tenant-api-key");
      await mkdir(home, { recursive: true });
      await writeFile(keyFile, created.value.apiKey + "\n", { mode: 0o600 });
      await chmod(keyFile, 0o600);
      process.stderr.write(`clearline created tenant "default"; its API key is in ${keyFile}\n`);
      tenant = created.value;
    } else {
      tenant = await findTenant(pool, "default");   // another process created it meanwhile
    }
  }
  if (!tenant) throw new Error("the default tenant could not be created");
  if (!(await findPartner(pool, tenant.tenantId, "default"))) {
    const created = await createPartner(pool, tenant.tenantId, "default");
    const exists = !created.ok && created.error.code === "PARTNER_EXISTS";
    if (!created.ok && !exists) throw new Error(created.error.message);
    logger.info({ tenant: "default", partner: "default" }, "default partner created");
  }
}

async function resolveSource(
  pool: Pool, tenantName: string, partnerName: string, where: string,
): Promise<{ tenantId: string; name: string; partner: Partner }> {
  const tenant = await findTenant(pool, tenantName);
  if (!tenant) throw new Error(`${where}: no tenant ${tenantName} (clearline tenant add ${tenantName})`);
  const partner = await findPartner(pool, tenant.tenantId, partnerName);
  if (!partner) throw new Error(`${where}: no partner ${partnerName} of tenant ${tenantName} (clearline partner add --tenant ${tenantName} ${partnerName})`);
  return { tenantId: tenant.tenantId, name: tenant.name, partner };
}

/** A source's work: started when its process is granted the source's lease, stopped when lost. */
export interface LeasedSource {
  start(fence: ReceiptFence): Promise<void>;
  stop(): Promise<void>;
}

/** How the composition root runs each source: under a lease of the fleet (docs/decisions/0072). */
export type HoldSource = (leaseName: string, source: LeasedSource) => void;

/** The lease of a drop folder: one per folder (its absolute path), whichever processes watch it. */
export function dropFolderLeaseName(
  source: { tenant: string; partner: string; path: string },
): string {
  return `drop-folder:${source.tenant}/${source.partner}:${source.path}`;
}

/** The lease of an SFTP partner's inbox. */
export function sftpLeaseName(source: SftpPartnerSource): string {
  const server = `${source.username}@${source.host}:${source.port}`;
  return `sftp:${source.tenant}/${source.partner}:${server}:${source.inbox}`;
}

/**
 * Starts the file sources of `clearline serve`: each drop folder and SFTP partner is handed to
 * `hold`, which starts it while this process holds its lease (one process of a fleet takes a
 * source's files at a time) and stops it when the lease is lost. A configured source naming an
 * unknown tenant or partner stops the start-up. The ingest gauges are refreshed periodically on
 * every process; resuming abandoned files is a singleton job of the composition root.
 */
export async function startIngestSources(
  pool: Pool, settings: IngestSettings, home: string, logger: Logger, hold: HoldSource,
  calendars: Parameters<typeof partnerCalendar>[0] = { partnerCalendars: [], calendarClosings: [] },
): Promise<IngestSources> {
  const base = { suspectWindowHours: settings.suspectWindowHours };
  // Each source's files settle on its partner's calendar when configuration names one (0101).
  const ingestOf = (tenant: { tenantId: string; name: string }, partner: Partner) => {
    const achCalendar = partnerCalendar(calendars, tenant, partner);
    return achCalendar === undefined ? base : { ...base, achCalendar };
  };
  if (settings.zeroConfiguration) await ensureDefaults(pool, home, logger);
  const pollers = new Set<SftpPoller>();
  const described: IngestSources["dropFolders"] = [];
  for (const [index, source] of settings.dropFolders.entries()) {
    const { tenantId, name, partner } = await resolveSource(pool, source.tenant, source.partner, `dropFolders[${index}]`);
    const ingest = ingestOf({ tenantId, name }, partner);
    await mkdir(source.path, { recursive: true });
    const folderLogger = logger.child({ component: "drop-folder", folder: source.path });
    let folder: DropFolder | undefined;
    hold(dropFolderLeaseName(source), {
      async start(fence) {
        folder = new DropFolder({
          pool, tenantId, partner, folder: source.path, logger: folderLogger, ingest, fence,
        });
        await folder.start();
      },
      async stop() {
        await folder?.stop();
        folder = undefined;
      },
    });
    described.push({ path: source.path, tenant: source.tenant, partner: source.partner });
  }
  for (const [index, source] of settings.sftpPartners.entries()) {
    const { tenantId, name, partner } = await resolveSource(pool, source.tenant, source.partner, `sftpPartners[${index}]`);
    const ingest = ingestOf({ tenantId, name }, partner);
    const pollerLogger = logger.child({ component: "sftp", partner: partner.name });
    const spoolFolder = path.join(home, "spool", partner.name);
    let poller: SftpPoller | undefined;
    hold(sftpLeaseName(source), {
      async start(fence) {
        poller = new SftpPoller({
          pool, tenantId, partner, source, spoolFolder, logger: pollerLogger, ingest, fence,
        });
        pollers.add(poller);
        poller.start();
      },
      async stop() {
        const stopping = poller;
        poller = undefined;
        if (stopping === undefined) return;
        pollers.delete(stopping);
        await stopping.stop();
      },
    });
  }
  return gaugesAndDescription(pool, described, pollers, logger);
}

/** The sources' view for serve: gauges refreshed on every process, health of its pollers. */
function gaugesAndDescription(
  pool: Pool, described: IngestSources["dropFolders"], pollers: Set<SftpPoller>, logger: Logger,
): IngestSources {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const failures = repeatedFailureLog(logger,
    "refreshing the ingest gauges failed; retried at the next interval");
  const timer = setInterval(() => {
    running = running.then(async () => {
      if (stopped) return;
      await refreshIngestGauges(pool).then(() => failures.succeeded(),
        (error: unknown) => failures.failed(error));
    });
  }, limits.ingest.rescanIntervalMs);
  timer.unref();
  for (const drop of described) {
    const owner = `tenant ${drop.tenant}, partner ${drop.partner}`;
    process.stderr.write(`clearline drop folder: ${drop.path} (${owner})\n`);
  }
  return {
    dropFolders: described,
    health() {
      const failing = [...pollers].map((p) => p.health()).filter((h) => !h.ok);
      if (failing.length === 0) return { ok: true };
      return { ok: false, reason: failing.map((h) => h.reason).join("; ") };
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      failures.close();
    },
  };
}
