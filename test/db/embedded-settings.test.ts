import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { startEmbeddedPostgres } from "../../src/db/embedded.ts";
import { embeddedServerSettings, embeddedSettingBounds } from "../../src/db/embedded-settings.ts";

const GiB = 1024 ** 3;

describe("the embedded PostgreSQL's settings, sized from the machine's memory", () => {
  it("gives shared buffers an eighth of memory, the WAL twice that, and compresses full-page images", () => {
    expect(embeddedServerSettings(24 * GiB, {})).toEqual({
      ok: true, value: { sharedBuffersMb: 3_072, maxWalSizeMb: 6_144, walCompression: "pglz" },
    });
  });

  it("keeps PostgreSQL's defaults as the floor on a small machine and bounds a large one", () => {
    expect(embeddedServerSettings(512 * 1024 ** 2, {})).toMatchObject({ value: { sharedBuffersMb: 128, maxWalSizeMb: 1_024 } });
    expect(embeddedServerSettings(512 * GiB, {})).toMatchObject({ value: { sharedBuffersMb: 8_192, maxWalSizeMb: 16_384 } });
  });

  it("takes each value from the environment when set", () => {
    const env = { CLEARLINE_PG_SHARED_BUFFERS_MB: "256", CLEARLINE_PG_MAX_WAL_SIZE_MB: "2048", CLEARLINE_PG_WAL_COMPRESSION: "off" };
    expect(embeddedServerSettings(24 * GiB, env)).toEqual({ ok: true, value: { sharedBuffersMb: 256, maxWalSizeMb: 2_048, walCompression: "off" } });
  });

  it("refuses a value one past its bound, or not a number, naming the variable", () => {
    const over = String(embeddedSettingBounds.sharedBuffersMbMax + 1);
    expect(embeddedServerSettings(24 * GiB, { CLEARLINE_PG_SHARED_BUFFERS_MB: over })).toEqual({ ok: false, error: expect.stringContaining("CLEARLINE_PG_SHARED_BUFFERS_MB") });
    const under = String(embeddedSettingBounds.maxWalSizeMbMin - 1);
    expect(embeddedServerSettings(24 * GiB, { CLEARLINE_PG_MAX_WAL_SIZE_MB: under })).toEqual({ ok: false, error: expect.stringContaining("CLEARLINE_PG_MAX_WAL_SIZE_MB") });
    expect(embeddedServerSettings(24 * GiB, { CLEARLINE_PG_MAX_WAL_SIZE_MB: "2GB" })).toMatchObject({ ok: false });
    expect(embeddedServerSettings(24 * GiB, { CLEARLINE_PG_WAL_COMPRESSION: "gzip" })).toEqual({ ok: false, error: expect.stringContaining("CLEARLINE_PG_WAL_COMPRESSION") });
  });
});

describe("the embedded PostgreSQL started with them", () => {
  const home = mkdtempSync(path.join(tmpdir(), "clearline-embedded-settings-"));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it("runs with the sizes it was given, an override from the environment included", async () => {
    process.env.CLEARLINE_PG_SHARED_BUFFERS_MB = "160";
    const server = await startEmbeddedPostgres(home, { persistent: false });
    delete process.env.CLEARLINE_PG_SHARED_BUFFERS_MB;
    const client = new pg.Client({ connectionString: server.url });
    try {
      await client.connect();
      const { rows } = await client.query<{ name: string; setting: string }>(
        "SELECT name, current_setting(name) AS setting FROM unnest(ARRAY['shared_buffers', 'wal_compression']) AS name");
      expect(rows).toEqual([{ name: "shared_buffers", setting: "160MB" }, { name: "wal_compression", setting: "pglz" }]);
    } finally {
      await client.end();
      await server.stop();
    }
  });
});
