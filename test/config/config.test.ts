import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.ts";
import { assertLimitsValid, limits } from "../../src/config/limits.ts";

describe("configuration", () => {
  it("defaults to the embedded database under ./.clearline and HTTP port 8080", () => {
    const loaded = loadConfig({ CLEARLINE_HOME: "/tmp/clearline-config-test-none" });
    expect(loaded).toMatchObject({ ok: true, value: { httpPort: 8080, home: "/tmp/clearline-config-test-none" } });
    if (loaded.ok) expect(loaded.value.databaseUrl).toBeUndefined();
  });

  it("refuses a port one past its bound, naming the setting", () => {
    const loaded = loadConfig({ CLEARLINE_HOME: "/tmp/x", CLEARLINE_HTTP_PORT: "65536" });
    expect(loaded.ok).toBe(false);
    if (!loaded.ok) expect(loaded.errors[0]).toMatchObject({ code: "CONFIG_INVALID", position: { field: "httpPort" } });
  });

  it("refuses a database URL that is not postgres://", () => {
    const loaded = loadConfig({ CLEARLINE_HOME: "/tmp/x", DATABASE_URL: "mysql://x" });
    expect(loaded.ok).toBe(false);
  });

  it("refuses a non-numeric interval rather than guessing", () => {
    const loaded = loadConfig({ CLEARLINE_HOME: "/tmp/x", CLEARLINE_PROJECTION_INTERVAL_MS: "5s" });
    expect(loaded.ok).toBe(false);
    if (!loaded.ok) expect(loaded.errors[0]?.position.field).toBe("projectionIntervalMs");
  });

  it("holds every bound as a positive whole number", () => {
    expect(() => assertLimitsValid()).not.toThrow();
    expect(() => assertLimitsValid({ db: { poolConnectionsMax: 0 } })).toThrow(/poolConnectionsMax/);
    expect(limits.db.poolConnectionsMax).toBeGreaterThan(0);
  });
});
