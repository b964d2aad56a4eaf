import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { finding, type Finding } from "../errors/finding.ts";
import {
  calendarClosingSettings, type CalendarClosingSetting,
} from "./calendar-closings-config.ts";
import { partnerCalendarSettings, type PartnerCalendarSetting } from "./partner-calendar-config.ts";
import { iso8583AdmissionSettings, type Iso8583AdmissionConfig } from "./iso8583-admission.ts";
import { ingestSettings, type IngestSettings } from "./sources-config.ts";
import { framings, shippedDictionaries } from "../protocols/iso8583/index.ts";
import { limits } from "./limits.ts";
import { returnCutoffSettings, type ReturnCutoffSetting } from "./return-cutoff-config.ts";

/**
 * Service configuration: an optional JSON file (CLEARLINE_CONFIG, else CLEARLINE_HOME/config.json)
 * overlaid by environment variables, overlaid by command-line options. Validated at start: a
 * bad value stops the service with a message naming the setting, never a silent default.
 */
export interface Config {
  home: string;                     // CLEARLINE_HOME: embedded database, drop folders, spool
  databaseUrl?: string;             // DATABASE_URL: use this server instead of the embedded one
  outboxLeaseMs: number;           // CLEARLINE_OUTBOX_LEASE_MS: how long a relay holds a leased row (default limits.outbox.leaseMs)
  // CLEARLINE_FLEET_LEASE_MS: a lease on a file source, singleton job or the scheme link (0072)
  fleetLeaseMs: number;
  // CLEARLINE_LIVENESS_WITHOUT_DATABASE_MS: /livez fails once no database answered this long (0081)
  livenessWithoutDatabaseMs: number;
  natsUrl?: string;                 // CLEARLINE_NATS_URL: events to JetStream, payment requests from it (docs/decisions/0024)
  httpHost: string;                 // CLEARLINE_HTTP_HOST
  httpPort: number;                 // CLEARLINE_HTTP_PORT; 0 picks a free port (tests)
  iso8583Port?: number;             // CLEARLINE_ISO8583_PORT
  iso8583Host: string;              // CLEARLINE_ISO8583_HOST: where the scheme endpoint listens
  iso8583Dictionary: string;        // CLEARLINE_ISO8583_DICTIONARY: iso87-ascii (default) or iso87-binary
  iso8583Framing: string;           // CLEARLINE_ISO8583_FRAMING: binary-2 (default), ascii-4, bcd-2, vml-4
  cardHashSecret?: string;          // CLEARLINE_CARD_HASH_SECRET: hex, >= 32 bytes; unset: CLEARLINE_HOME/card-hash.key (docs/decisions/0020)
  webhookSecretKey?: string;        // CLEARLINE_WEBHOOK_SECRET_KEY: hex, >= 32 bytes; unset: CLEARLINE_HOME/webhook-secret.key (docs/decisions/0065)
  iso8583Outbound?: Iso8583OutboundConfig; // the scheme that authorizations go to (file key iso8583Outbound, or CLEARLINE_ISO8583_OUTBOUND_*)
  iso8583Admission: Iso8583AdmissionConfig; // who may connect to the scheme endpoint (src/config/iso8583-admission.ts)
  logLevel: string;                 // CLEARLINE_LOG_LEVEL
  projectionIntervalMs: number;     // how often the balance projection is advanced
  shutdownTimeoutMs: number;        // graceful stop before the process exits anyway
  ingest: IngestSettings;           // suspect window, drop folders, SFTP partners (src/config/sources-config.ts)
  returnCutoffs: ReturnCutoffSetting[]; // file key returnCutoffs: when serve cuts each partner's ACH returns (src/config/return-cutoff-config.ts)
  // file key calendarClosings or CLEARLINE_CALENDAR_CLOSINGS: unscheduled closings (0092)
  calendarClosings: CalendarClosingSetting[];
  // file key partnerCalendars: the calendar each partner settles on (0092)
  partnerCalendars: PartnerCalendarSetting[];
}

export interface Iso8583OutboundConfig {
  host: string;                     // CLEARLINE_ISO8583_OUTBOUND_HOST
  port: number;                     // CLEARLINE_ISO8583_OUTBOUND_PORT
  dictionary: string;               // CLEARLINE_ISO8583_OUTBOUND_DICTIONARY, default iso87-ascii
  framing: string;                  // CLEARLINE_ISO8583_OUTBOUND_FRAMING, default binary-2
  acquirerId: string;               // CLEARLINE_ISO8583_ACQUIRER_ID: DE 32 of what we send
  responseTimeoutMs: number;        // CLEARLINE_ISO8583_OUTBOUND_TIMEOUT_MS: after it, the authorization is reversed
}

const defaults = {
  home: ".clearline",
  httpHost: "127.0.0.1",
  httpPort: 8080,
  logLevel: "info",
  projectionIntervalMs: 5_000,      // balances stay exact meanwhile: reads add the unfolded delta rows
  shutdownTimeoutMs: 10_000,
};

const LOG_LEVELS = new Set(["fatal", "error", "warn", "info", "debug", "trace", "silent"]);

type Source = Record<string, unknown>;

/** Overrides come from the command line: strings, validated like every other source. */
export type ConfigOverrides = Partial<Record<keyof Config, string | number>>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: ConfigOverrides = {}): { ok: true; value: Config } | { ok: false; errors: Finding[] } {
  const home = path.resolve(String(overrides.home ?? env.CLEARLINE_HOME ?? defaults.home));
  const errors: Finding[] = [];
  const file: Source = readConfigFile(env.CLEARLINE_CONFIG ?? path.join(home, "config.json"), errors);
  const pick = (name: keyof Config, envName: string): unknown => overrides[name] ?? env[envName] ?? file[name];

  const config: Config = {
    home,
    iso8583Host: "127.0.0.1", iso8583Dictionary: "iso87-ascii", iso8583Framing: "binary-2", // set by iso8583Settings
    httpHost: stringSetting("httpHost", pick("httpHost", "CLEARLINE_HTTP_HOST") ?? defaults.httpHost, errors),
    httpPort: integerSetting("httpPort", pick("httpPort", "CLEARLINE_HTTP_PORT") ?? defaults.httpPort, 0, 65_535, errors),
    logLevel: stringSetting("logLevel", pick("logLevel", "CLEARLINE_LOG_LEVEL") ?? defaults.logLevel, errors),
    projectionIntervalMs: integerSetting("projectionIntervalMs", pick("projectionIntervalMs", "CLEARLINE_PROJECTION_INTERVAL_MS") ?? defaults.projectionIntervalMs, 100, 3_600_000, errors),
    shutdownTimeoutMs: integerSetting("shutdownTimeoutMs", pick("shutdownTimeoutMs", "CLEARLINE_SHUTDOWN_TIMEOUT_MS") ?? defaults.shutdownTimeoutMs, 100, 600_000, errors),
    ingest: ingestSettings(env, file, home, errors),
    returnCutoffs: returnCutoffSettings(file, errors),
    calendarClosings: calendarClosingSettings(env, file, errors),
    partnerCalendars: partnerCalendarSettings(file, errors),
    // Shorter leases take a dead relay's rows over sooner (tests); a delivery gets half the lease.
    outboxLeaseMs: integerSetting("outboxLeaseMs", pick("outboxLeaseMs", "CLEARLINE_OUTBOX_LEASE_MS") ?? limits.outbox.leaseMs, 1_000, 3_600_000, errors),
    // A dead process's sources and jobs move to another within this plus a third of it.
    fleetLeaseMs: integerSetting("fleetLeaseMs", pick("fleetLeaseMs", "CLEARLINE_FLEET_LEASE_MS")
      ?? limits.fleet.leaseMs, limits.fleet.leaseMsMin, limits.fleet.leaseMsMax, errors),
    livenessWithoutDatabaseMs: integerSetting("livenessWithoutDatabaseMs",
      pick("livenessWithoutDatabaseMs", "CLEARLINE_LIVENESS_WITHOUT_DATABASE_MS")
        ?? limits.availability.livenessWithoutDatabaseMs,
      limits.availability.livenessWithoutDatabaseMsMin,
      limits.availability.livenessWithoutDatabaseMsMax, errors),
    iso8583Admission: iso8583AdmissionSettings((name, envName) => overrides[name as keyof Config] ?? env[envName] ?? file[name], home, errors),
  };
  const natsUrl = pick("natsUrl", "CLEARLINE_NATS_URL");
  if (natsUrl !== undefined && natsUrl !== "") {
    config.natsUrl = stringSetting("natsUrl", natsUrl, errors);
    if (!/^(nats|tls):\/\/[^\s]+$/.test(config.natsUrl)) errors.push(finding("CONFIG_INVALID", "CLEARLINE_NATS_URL must look like nats://host:port", { field: "natsUrl" }));
  }
  const webhookKey = pick("webhookSecretKey", "CLEARLINE_WEBHOOK_SECRET_KEY");
  if (webhookKey !== undefined && webhookKey !== "") {
    if (typeof webhookKey === "string" && /^(?:[0-9a-fA-F]{2}){32,}$/.test(webhookKey)) config.webhookSecretKey = webhookKey;
    else errors.push(finding("CONFIG_INVALID", "webhookSecretKey must be at least 64 hexadecimal digits (32 bytes)", { field: "webhookSecretKey" }));
  }
  const databaseUrl = pick("databaseUrl", "DATABASE_URL");
  if (databaseUrl !== undefined && databaseUrl !== "") {
    config.databaseUrl = stringSetting("databaseUrl", databaseUrl, errors);
    if (!/^postgres(ql)?:\/\//.test(config.databaseUrl)) errors.push(finding("CONFIG_INVALID", "DATABASE_URL must start with postgres://", { field: "databaseUrl" }));
  }
  const iso8583Port = pick("iso8583Port", "CLEARLINE_ISO8583_PORT");
  if (iso8583Port !== undefined && iso8583Port !== "") config.iso8583Port = integerSetting("iso8583Port", iso8583Port, 0, 65_535, errors);
  iso8583Settings(config, pick, env, file, errors);
  if (!LOG_LEVELS.has(config.logLevel)) errors.push(finding("CONFIG_INVALID", `logLevel must be one of ${[...LOG_LEVELS].join(", ")}`, { field: "logLevel" }));
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: config };
}

/**
 * The configuration this process decides with. Its entry point (`clearline serve`, each CLI
 * command) sets it from what it loaded, command-line options included; a process that set none
 * (a library caller) loads it once from the environment and the config file. Decisions deep in
 * the record core read settings that change what they write (natsUrl: whether an event is also
 * queued for JetStream) from here, so the file and the environment mean the same everywhere.
 */
let processConfig: Config | undefined;

export function setProcessConfig(config: Config): void {
  processConfig = config;
}

export function currentConfig(): Config {
  if (processConfig) return processConfig;
  const loaded = loadConfig();
  if (!loaded.ok) throw new Error(`configuration: ${loaded.errors.map((e) => e.message).join("; ")}`);
  processConfig = loaded.value;
  return processConfig;
}

function readConfigFile(file: string, errors: Finding[]): Source {
  if (!existsSync(file)) return {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as Source;
    errors.push(finding("CONFIG_INVALID", `${file} must hold a JSON object`, { file }));
  } catch (error) {
    errors.push(finding("CONFIG_INVALID", `${file} is not valid JSON: ${(error as Error).message}`, { file }));
  }
  return {};
}

function stringSetting(name: string, value: unknown, errors: Finding[]): string {
  if (typeof value === "string" && value.length > 0) return value;
  errors.push(finding("CONFIG_INVALID", `${name} must be a non-empty string`, { field: name }));
  return "";
}

function integerSetting(name: string, value: unknown, min: number, max: number, errors: Finding[]): number {
  const text = String(value);
  const parsed = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (Number.isSafeInteger(parsed) && parsed >= min && parsed <= max) return parsed;
  errors.push(finding("CONFIG_INVALID", `${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`, { field: name }));
  return min;
}

/**
 * The card channel's settings (decisions 0020, 0022): endpoint codec, card hash secret, outbound
 * scheme connection.
 */
function iso8583Settings(config: Config, pick: (name: keyof Config, envName: string) => unknown, env: NodeJS.ProcessEnv, file: Source, errors: Finding[]): void {
  const dictionaryNames = [...shippedDictionaries.keys()];
  const oneOf = (name: string, value: unknown, allowed: readonly string[]): string => {
    if (typeof value === "string" && allowed.includes(value)) return value;
    errors.push(finding("CONFIG_INVALID", `${name} must be one of ${allowed.join(", ")}, got ${JSON.stringify(value)}`, { field: name }));
    return allowed[0] ?? "";
  };
  config.iso8583Host = stringSetting("iso8583Host", pick("iso8583Host", "CLEARLINE_ISO8583_HOST") ?? "127.0.0.1", errors);
  config.iso8583Dictionary = oneOf("iso8583Dictionary", pick("iso8583Dictionary", "CLEARLINE_ISO8583_DICTIONARY") ?? "iso87-ascii", dictionaryNames);
  config.iso8583Framing = oneOf("iso8583Framing", pick("iso8583Framing", "CLEARLINE_ISO8583_FRAMING") ?? "binary-2", framings);
  const secret = pick("cardHashSecret", "CLEARLINE_CARD_HASH_SECRET");
  if (secret !== undefined && secret !== "") {
    if (typeof secret === "string" && /^(?:[0-9a-fA-F]{2}){32,}$/.test(secret)) config.cardHashSecret = secret;
    else errors.push(finding("CONFIG_INVALID", "cardHashSecret must be at least 64 hexadecimal digits (32 bytes)", { field: "cardHashSecret" }));
  }
  const fromFile = typeof file.iso8583Outbound === "object" && file.iso8583Outbound !== null ? file.iso8583Outbound as Source : {};
  const outbound = (name: string, envName: string): unknown => env[envName] ?? fromFile[name];
  const host = outbound("host", "CLEARLINE_ISO8583_OUTBOUND_HOST");
  if (host === undefined || host === "") return;
  config.iso8583Outbound = {
    host: stringSetting("iso8583Outbound.host", host, errors),
    port: integerSetting("iso8583Outbound.port", outbound("port", "CLEARLINE_ISO8583_OUTBOUND_PORT"), 1, 65_535, errors),
    dictionary: oneOf("iso8583Outbound.dictionary", outbound("dictionary", "CLEARLINE_ISO8583_OUTBOUND_DICTIONARY") ?? "iso87-ascii", dictionaryNames),
    framing: oneOf("iso8583Outbound.framing", outbound("framing", "CLEARLINE_ISO8583_OUTBOUND_FRAMING") ?? "binary-2", framings),
    acquirerId: stringSetting("iso8583Outbound.acquirerId", outbound("acquirerId", "CLEARLINE_ISO8583_ACQUIRER_ID"), errors),
    responseTimeoutMs: integerSetting("iso8583Outbound.responseTimeoutMs", outbound("responseTimeoutMs", "CLEARLINE_ISO8583_OUTBOUND_TIMEOUT_MS") ?? limits.iso8583.outboundResponseTimeoutMs, 100, 120_000, errors),
  };
  if (!/^\d{1,11}$/.test(config.iso8583Outbound.acquirerId)) errors.push(finding("CONFIG_INVALID", "iso8583Outbound.acquirerId must be 1 to 11 digits (DE 32)", { field: "iso8583Outbound.acquirerId" }));
}
