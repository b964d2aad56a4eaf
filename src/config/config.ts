import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { finding, type Finding } from "../errors/finding.ts";

/**
 * Service configuration: an optional JSON file (CLEARLINE_CONFIG, else CLEARLINE_HOME/config.json)
 * overlaid by environment variables, overlaid by command-line options. Validated at start: a
 * bad value stops the service with a message naming the setting, never a silent default.
 */
export interface Config {
  home: string;                     // CLEARLINE_HOME: embedded database, drop folders, spool
  databaseUrl?: string;             // DATABASE_URL: use this server instead of the embedded one
  httpHost: string;                 // CLEARLINE_HTTP_HOST
  httpPort: number;                 // CLEARLINE_HTTP_PORT; 0 picks a free port (tests)
  iso8583Port?: number;             // CLEARLINE_ISO8583_PORT
  logLevel: string;                 // CLEARLINE_LOG_LEVEL
  projectionIntervalMs: number;     // how often the balance projection is advanced
  shutdownTimeoutMs: number;        // graceful stop before the process exits anyway
}

const defaults = {
  home: ".clearline",
  httpHost: "127.0.0.1",
  httpPort: 8080,
  logLevel: "info",
  projectionIntervalMs: 5_000,      // balances stay exact meanwhile: reads add entries past the watermark
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
    httpHost: stringSetting("httpHost", pick("httpHost", "CLEARLINE_HTTP_HOST") ?? defaults.httpHost, errors),
    httpPort: integerSetting("httpPort", pick("httpPort", "CLEARLINE_HTTP_PORT") ?? defaults.httpPort, 0, 65_535, errors),
    logLevel: stringSetting("logLevel", pick("logLevel", "CLEARLINE_LOG_LEVEL") ?? defaults.logLevel, errors),
    projectionIntervalMs: integerSetting("projectionIntervalMs", pick("projectionIntervalMs", "CLEARLINE_PROJECTION_INTERVAL_MS") ?? defaults.projectionIntervalMs, 100, 3_600_000, errors),
    shutdownTimeoutMs: integerSetting("shutdownTimeoutMs", pick("shutdownTimeoutMs", "CLEARLINE_SHUTDOWN_TIMEOUT_MS") ?? defaults.shutdownTimeoutMs, 100, 600_000, errors),
  };
  const databaseUrl = pick("databaseUrl", "DATABASE_URL");
  if (databaseUrl !== undefined && databaseUrl !== "") {
    config.databaseUrl = stringSetting("databaseUrl", databaseUrl, errors);
    if (!/^postgres(ql)?:\/\//.test(config.databaseUrl)) errors.push(finding("CONFIG_INVALID", "DATABASE_URL must start with postgres://", { field: "databaseUrl" }));
  }
  const iso8583Port = pick("iso8583Port", "CLEARLINE_ISO8583_PORT");
  if (iso8583Port !== undefined && iso8583Port !== "") config.iso8583Port = integerSetting("iso8583Port", iso8583Port, 0, 65_535, errors);
  if (!LOG_LEVELS.has(config.logLevel)) errors.push(finding("CONFIG_INVALID", `logLevel must be one of ${[...LOG_LEVELS].join(", ")}`, { field: "logLevel" }));
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: config };
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
