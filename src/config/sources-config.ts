import { createHash } from "node:crypto";
import path from "node:path";
import { limits } from "./limits.ts";
import { finding, type Finding } from "../errors/finding.ts";
import { partnerOutboundSettings, type PartnerOutboundSetting } from "./partner-outbound-config.ts";

/** A drop folder watched for one tenant and partner. */
export interface DropFolderSource {
  tenant: string;                  // name or id
  partner: string;                 // name or id
  path: string;                    // absolute; processed/ and rejected/ are made inside it
}

/**
 * An SFTP partner polled for files. The server's host key fingerprint is mandatory: a connection
 * to a server whose key does not match is refused before any credential is sent.
 */
export interface SftpPartnerSource {
  tenant: string;
  partner: string;
  host: string;
  port: number;
  username: string;
  privateKeyPath: string;
  hostKeySha256: string;           // "SHA256:<base64>" as `ssh-keygen -lf` prints it
  inbox: string;                   // remote folder listed for files
  namePattern: string;             // regular expression a file name must match
  doneMarkerSuffix?: string;       // when set, a file is taken only once "<name><suffix>" exists
  archive?: string;                // remote folder files are moved to after the commit
  rejected?: string;               // remote folder refused files are moved to (default "rejected"), apart from the archive
  deleteAfter?: boolean;           // delete instead of archiving
  pollIntervalMs: number;
}

/**
 * "SHA256:<base64 without padding>", as `ssh-keygen -lf` prints a host key's fingerprint: the form
 * of `hostKeySha256`, so both SFTP clients (the poller and the partner deliverer) compare a
 * presented key with the configured one here.
 */
export function hostKeyFingerprint(key: Buffer): string {
  return `SHA256:${createHash("sha256").update(key).digest("base64").replace(/=+$/, "")}`;
}

export interface IngestSettings {
  suspectWindowHours: number;
  dropFolders: DropFolderSource[];
  sftpPartners: SftpPartnerSource[];
  /** Where each partner's outbound files (status reports, return files) are delivered (docs/decisions/0025). */
  partnerOutbound: PartnerOutboundSetting[];
  /** True when no source was configured: `serve` creates the default tenant, partner and drop folder. */
  zeroConfiguration: boolean;
}

type Source = Record<string, unknown>;

function text(value: unknown): value is string {
  return typeof value === "string" && value.length > 0;
}

/**
 * Ingestion settings: the suspect window from CLEARLINE_SUSPECT_WINDOW_HOURS or the config file;
 * drop folders (`dropFolders`) and SFTP partners (`sftpPartners`) from the config file, or one
 * drop folder from CLEARLINE_DROP_FOLDER (for the default tenant and partner). Nothing configured:
 * zero configuration, a drop folder at CLEARLINE_HOME/drop for tenant and partner "default".
 */
export function ingestSettings(env: NodeJS.ProcessEnv, file: Source, home: string, errors: Finding[]): IngestSettings {
  const windowText = String(env.CLEARLINE_SUSPECT_WINDOW_HOURS ?? file.suspectWindowHours ?? limits.ingest.suspectWindowHours);
  const suspectWindowHours = /^\d+$/.test(windowText) ? Number(windowText) : Number.NaN;
  if (!(suspectWindowHours >= 1 && suspectWindowHours <= 24 * 366)) {
    errors.push(finding("CONFIG_INVALID", `suspectWindowHours must be a whole number of hours from 1 to ${24 * 366}, got ${JSON.stringify(windowText)}`, { field: "suspectWindowHours" }));
  }
  const dropFolders: DropFolderSource[] = [];
  const sftpPartners: SftpPartnerSource[] = [];
  const rawDrops = file.dropFolders;
  const rawSftp = file.sftpPartners;
  if (rawDrops !== undefined) {
    if (!Array.isArray(rawDrops)) errors.push(finding("CONFIG_INVALID", "dropFolders must be a list", { field: "dropFolders" }));
    else for (const [index, raw] of (rawDrops as Source[]).entries()) {
      if (!text(raw?.tenant) || !text(raw.partner) || !text(raw.path)) {
        errors.push(finding("CONFIG_INVALID", `dropFolders[${index}] needs tenant, partner and path`, { field: `dropFolders[${index}]` }));
        continue;
      }
      dropFolders.push({ tenant: raw.tenant, partner: raw.partner, path: path.resolve(home, raw.path) });
    }
  }
  if (env.CLEARLINE_DROP_FOLDER) dropFolders.push({ tenant: "default", partner: "default", path: path.resolve(env.CLEARLINE_DROP_FOLDER) });
  if (rawSftp !== undefined) {
    if (!Array.isArray(rawSftp)) errors.push(finding("CONFIG_INVALID", "sftpPartners must be a list", { field: "sftpPartners" }));
    else for (const [index, raw] of (rawSftp as Source[]).entries()) {
      const parsed = sftpSource(raw, index, home, errors);
      if (parsed) sftpPartners.push(parsed);
    }
  }
  const zeroConfiguration = rawDrops === undefined && rawSftp === undefined && !env.CLEARLINE_DROP_FOLDER;
  if (zeroConfiguration) dropFolders.push({ tenant: "default", partner: "default", path: path.join(home, "drop") });
  const partnerOutbound = partnerOutboundSettings(file, home, sftpPartners, errors);
  return { suspectWindowHours, dropFolders, sftpPartners, partnerOutbound, zeroConfiguration };
}

function sftpSource(raw: Source | undefined, index: number, home: string, errors: Finding[]): SftpPartnerSource | undefined {
  const where = `sftpPartners[${index}]`;
  const missing = ["tenant", "partner", "host", "username", "privateKeyPath", "inbox"].filter((name) => !text(raw?.[name]));
  if (!raw || missing.length > 0) {
    errors.push(finding("CONFIG_INVALID", `${where} needs ${missing.join(", ")}`, { field: where }));
    return undefined;
  }
  if (!text(raw.hostKeySha256) || !/^SHA256:[A-Za-z0-9+/]{43}=?$/.test(raw.hostKeySha256)) {
    const field = `${where}.hostKeySha256`;
    const detail = `${field} must be the server's host key fingerprint as SHA256:<base64>`;
    errors.push(finding("SOURCE_SFTP_HOST_KEY_MISSING", detail, { field }));
    return undefined;
  }
  const port = raw.port === undefined ? 22 : Number(raw.port);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) errors.push(finding("CONFIG_INVALID", `${where}.port must be 1..65535`, { field: `${where}.port` }));
  const namePattern = text(raw.namePattern) ? raw.namePattern : "^[^.].*$";
  try {
    new RegExp(namePattern);
  } catch {
    errors.push(finding("CONFIG_INVALID", `${where}.namePattern is not a regular expression`, { field: `${where}.namePattern` }));
  }
  const pollIntervalMs = raw.pollIntervalMs === undefined ? limits.ingest.sftpPollIntervalMs : Number(raw.pollIntervalMs);
  if (!Number.isInteger(pollIntervalMs) || pollIntervalMs < 100 || pollIntervalMs > limits.ingest.sftpBackoffMaxMs) {
    errors.push(finding("CONFIG_INVALID", `${where}.pollIntervalMs must be 100..${limits.ingest.sftpBackoffMaxMs}`, { field: `${where}.pollIntervalMs` }));
  }
  if (raw.deleteAfter !== true && !text(raw.archive)) errors.push(finding("CONFIG_INVALID", `${where} needs an archive folder or deleteAfter: true`, { field: `${where}.archive` }));
  const source: SftpPartnerSource = {
    tenant: raw.tenant as string, partner: raw.partner as string, host: raw.host as string, port, username: raw.username as string,
    privateKeyPath: path.resolve(home, raw.privateKeyPath as string), hostKeySha256: raw.hostKeySha256, inbox: raw.inbox as string, namePattern, pollIntervalMs,
  };
  if (text(raw.doneMarkerSuffix)) source.doneMarkerSuffix = raw.doneMarkerSuffix;
  if (text(raw.archive)) source.archive = raw.archive;
  if (text(raw.rejected)) source.rejected = raw.rejected;
  if (raw.deleteAfter === true) source.deleteAfter = true;
  return source;
}
