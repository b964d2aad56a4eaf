import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.ts";
import { limits } from "../../src/config/limits.ts";

const home = "/tmp/clearline-config-test-none";

describe("configuration of the scheme endpoint's admission", () => {
  it("defaults to loopback peers only and sign-on required, without TLS", () => {
    const loaded = loadConfig({ CLEARLINE_HOME: home });
    expect(loaded).toMatchObject({ ok: true, value: { iso8583Admission: { allowedPeers: ["127.0.0.0/8", "::1/128"], requireSignOn: true } } });
    if (loaded.ok) expect(loaded.value.iso8583Admission.tls).toBeUndefined();
  });

  it("reads allowed peers as comma-separated CIDRs and refuses one that is not, naming it", () => {
    expect(loadConfig({ CLEARLINE_HOME: home, CLEARLINE_ISO8583_ALLOWED_PEERS: "10.1.2.0/24, 2001:db8::/32" })).toMatchObject({ ok: true, value: { iso8583Admission: { allowedPeers: ["10.1.2.0/24", "2001:db8::/32"] } } });
    for (const bad of ["10.1.2.0/33", "10.1.2.0", "scheme.example/24"]) {
      const loaded = loadConfig({ CLEARLINE_HOME: home, CLEARLINE_ISO8583_ALLOWED_PEERS: bad });
      expect(loaded.ok).toBe(false);
      if (!loaded.ok) expect(loaded.errors[0]).toMatchObject({ code: "CONFIG_INVALID", position: { field: "iso8583AllowedPeers" }, message: expect.stringContaining(bad) });
    }
  });

  it("takes sign-on required as true or false only", () => {
    expect(loadConfig({ CLEARLINE_HOME: home, CLEARLINE_ISO8583_REQUIRE_SIGN_ON: "false" })).toMatchObject({ ok: true, value: { iso8583Admission: { requireSignOn: false } } });
    expect(loadConfig({ CLEARLINE_HOME: home, CLEARLINE_ISO8583_REQUIRE_SIGN_ON: "no" }).ok).toBe(false);
  });

  it("needs all three TLS files, and each to exist", () => {
    const partial = loadConfig({ CLEARLINE_HOME: home, CLEARLINE_ISO8583_TLS_CERT: "/etc/hostname" });
    expect(partial.ok).toBe(false);
    const missing = loadConfig({ CLEARLINE_HOME: home, CLEARLINE_ISO8583_TLS_CERT: "/etc/hostname", CLEARLINE_ISO8583_TLS_KEY: "/etc/hostname", CLEARLINE_ISO8583_TLS_CLIENT_CA: "/nonexistent/ca.pem" });
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.errors[0]?.message).toContain("/nonexistent/ca.pem");
  });

  it("keeps the per-peer bound below the total and the frame deadline far below the idle timeout", () => {
    expect(limits.iso8583.inboundConnectionsPerPeerMax).toBeLessThan(limits.iso8583.inboundConnectionsMax);
    expect(limits.iso8583.inboundFrameStartedTimeoutMs * 10).toBeLessThanOrEqual(limits.iso8583.inboundIdleTimeoutMs);
  });
});
