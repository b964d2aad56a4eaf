import { chmod, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { limits } from "../config/limits.ts";
import type { Pool } from "../db/pool.ts";
import type { Logger } from "../observability/logger.ts";
import { createTenant, findTenant } from "../tenants/tenants.ts";
import { DropFolder } from "./drop-folder.ts";
import { createPartner, findPartner, type Partner } from "../partners/partners.ts";
import { refreshIngestGauges, resumeUnfinished } from "../files/pipeline.ts";
import type { IngestSettings } from "../config/sources-config.ts";
import { SftpPoller } from "./sftp.ts";

export interface IngestSources {
  /** Where files can be dropped, for the start-up message. */
  dropFolders: Array<{ path: string; tenant: string; partner: string }>;
  /** Every SFTP partner polling (its last poll succeeded), or the reasons of those that are not. */
  health(): { ok: boolean; reason?: string };
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

async function resolveSource(pool: Pool, tenantName: string, partnerName: string, where: string): Promise<{ tenantId: string; partner: Partner }> {
  const tenant = await findTenant(pool, tenantName);
  if (!tenant) throw new Error(`${where}: no tenant ${tenantName} (clearline tenant add ${tenantName})`);
  const partner = await findPartner(pool, tenant.tenantId, partnerName);
  if (!partner) throw new Error(`${where}: no partner ${partnerName} of tenant ${tenantName} (clearline partner add --tenant ${tenantName} ${partnerName})`);
  return { tenantId: tenant.tenantId, partner };
}

/**
 * Starts the file sources of `clearline serve`: files left unfinished are resumed (in the
 * background), the drop folders and SFTP pollers start, and a periodic job resumes abandoned files and refreshes
 * the gauges. A configured source naming an unknown tenant or partner stops the start-up.
 */
export async function startIngestSources(pool: Pool, settings: IngestSettings, home: string, logger: Logger): Promise<IngestSources> {
  const ingest = { suspectWindowHours: settings.suspectWindowHours };
  if (settings.zeroConfiguration) await ensureDefaults(pool, home, logger);
  const drops: DropFolder[] = [];
  const pollers: SftpPoller[] = [];
  const described: IngestSources["dropFolders"] = [];
  for (const [index, source] of settings.dropFolders.entries()) {
    const { tenantId, partner } = await resolveSource(pool, source.tenant, source.partner, `dropFolders[${index}]`);
    const folder = new DropFolder({ pool, tenantId, partner, folder: source.path, logger: logger.child({ component: "drop-folder", folder: source.path }), ingest });
    await mkdir(source.path, { recursive: true });
    await folder.start();
    drops.push(folder);
    described.push({ path: source.path, tenant: source.tenant, partner: source.partner });
  }
  for (const [index, source] of settings.sftpPartners.entries()) {
    const { tenantId, partner } = await resolveSource(pool, source.tenant, source.partner, `sftpPartners[${index}]`);
    const poller = new SftpPoller({ pool, tenantId, partner, source, spoolFolder: path.join(home, "spool", partner.name), logger: logger.child({ component: "sftp", partner: partner.name }), ingest });
    poller.start();
    pollers.push(poller);
  }

  let stopped = false;
  // Files left unfinished by an earlier run are resumed first, in the background (serving starts at once).
  let running: Promise<void> = resumeUnfinished(pool, { ...ingest, isStopped: () => stopped }).then(
    (resumed) => {
      if (resumed.length > 0) logger.info({ files: resumed.map((r) => ({ fileId: r.file_id, status: r.status })) }, "resumed files left unfinished");
    },
    (error: unknown) => logger.warn({ err: error }, "resuming unfinished files failed; the periodic job retries"),
  );
  const timer = setInterval(() => {
    running = running.then(async () => {
      if (stopped) return;
      try {
        await resumeUnfinished(pool, { ...ingest, staleAfterMs: limits.ingest.staleProcessingMs, isStopped: () => stopped });
        await refreshIngestGauges(pool);
      } catch (error) {
        logger.warn({ err: error }, "ingest maintenance failed; it runs again at its next interval");
      }
    });
  }, limits.ingest.rescanIntervalMs);
  timer.unref();

  for (const drop of described) process.stderr.write(`clearline drop folder: ${drop.path} (tenant ${drop.tenant}, partner ${drop.partner})\n`);
  return {
    dropFolders: described,
    health() {
      const failing = pollers.map((p) => p.health()).filter((h) => !h.ok);
      if (failing.length === 0) return { ok: true };
      return { ok: false, reason: failing.map((h) => h.reason).join("; ") };
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await Promise.all([...drops.map((d) => d.stop()), ...pollers.map((p) => p.stop())]);
      await running;
    },
  };
}
