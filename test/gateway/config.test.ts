import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.ts";

const base = { CLEARLINE_HOME: "/tmp/clearline-gateway-config-test" };

describe("the card channel's configuration", () => {
  it("defaults the scheme endpoint to ISO 8583:1987 ASCII with a 2-byte binary length header", () => {
    const loaded = loadConfig({ ...base, CLEARLINE_ISO8583_PORT: "8583" });
    expect(loaded.ok && [loaded.value.iso8583Port, loaded.value.iso8583Dictionary, loaded.value.iso8583Framing]).toEqual([8583, "iso87-ascii", "binary-2"]);
  });

  it("reads the outbound scheme connection from the environment", () => {
    const loaded = loadConfig({ ...base, CLEARLINE_ISO8583_OUTBOUND_HOST: "scheme.example", CLEARLINE_ISO8583_OUTBOUND_PORT: "9583", CLEARLINE_ISO8583_ACQUIRER_ID: "423935" });
    expect(loaded.ok && loaded.value.iso8583Outbound).toMatchObject({ host: "scheme.example", port: 9583, acquirerId: "423935", dictionary: "iso87-ascii", framing: "binary-2" });
  });

  it("refuses a card hash secret shorter than 32 bytes, an unknown framing and a non-numeric acquirer id, naming each", () => {
    const loaded = loadConfig({
      ...base, CLEARLINE_CARD_HASH_SECRET: "ab".repeat(31), CLEARLINE_ISO8583_FRAMING: "ascii-2",
      CLEARLINE_ISO8583_OUTBOUND_HOST: "scheme.example", CLEARLINE_ISO8583_OUTBOUND_PORT: "9583", CLEARLINE_ISO8583_ACQUIRER_ID: "ACQ1",
    });
    expect(loaded.ok).toBe(false);
    if (!loaded.ok) expect(loaded.errors.map((e) => e.position.field).sort()).toEqual(["cardHashSecret", "iso8583Framing", "iso8583Outbound.acquirerId"]);
  });
});
