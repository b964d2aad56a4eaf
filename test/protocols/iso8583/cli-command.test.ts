import { readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { decodeTool, dictionariesTool, encodeTool, registerIso8583Command } from "../../../src/cli/commands/iso8583.ts";
import { runCliInProcess } from "../../support/cli.ts";
import { fixturesDir, loadFixture } from "./support/fixtures.ts";

// The `clearline iso8583` tool lives in src/cli/commands; its tests sit with the codec it fronts.
const authorization = loadFixture("0100-authorization-request.json");
const pan = "4761739001010119";

describe("clearline iso8583 decode", () => {
  it("prints MTI and fields as JSON with card data masked", () => {
    const output = decodeTool(authorization.wireHex);
    expect(output.ok).toBe(true);
    if (!output.ok) return;
    const printed = JSON.parse(output.value) as { mti: string; fields: Record<string, string> };
    expect(printed.mti).toBe("0100");
    expect(printed.fields["2"]).toBe("476173******0119");
    expect(printed.fields["4"]).toBe("000000012550");
    expect(output.value).not.toContain(pan);
  });

  it("reads framed messages when told the framing", () => {
    const body = authorization.wireHex;
    const header = (body.length / 2).toString(16).padStart(4, "0");
    const output = decodeTool(`${header}${body}${header}${body}`, { framing: "binary-2" });
    expect(output.ok && output.value.split("\n}\n").length).toBe(2);
  });

  it("decodes with the binary dictionary", () => {
    const fixture = loadFixture("0100-binary-dictionary.json");
    const output = decodeTool(fixture.wireHex, { dictionary: "iso87-binary" });
    expect(output.ok && (JSON.parse(output.value) as { fields: Record<string, string> }).fields["28"]).toBe("C00000150");
  });

  it("accepts a dictionary file", () => {
    const path = join(tmpdir(), `iso8583-dictionary-${process.pid}.json`);
    writeFileSync(path, JSON.stringify({ name: "tiny", mti: { encoding: "ascii" }, bitmap: { encoding: "hex", bitmapsMax: 1 },
      fields: { "3": { name: "processingCode", type: "n", length: 6, prefix: "fixed", encoding: "ascii" } } }));
    const output = decodeTool(Buffer.from("0100" + "2000000000000000" + "000000").toString("hex"), { dictionary: path });
    expect(output.ok && JSON.parse(output.value)).toEqual({ mti: "0100", fields: { 3: "000000" } });
  });

  it("reports bad hex, an unknown framing and an unknown dictionary as typed errors", () => {
    expect(decodeTool("0100Z")).toMatchObject({ ok: false, error: { code: "ISO8583_HEX_INVALID" } });
    expect(decodeTool("00", { framing: "ascii-9" })).toMatchObject({ ok: false, error: { code: "ISO8583_FRAME_HEADER_INVALID" } });
    expect(decodeTool("00", { dictionary: "/nonexistent/dictionary.json" })).toMatchObject({ ok: false, error: { code: "ISO8583_DICTIONARY_INVALID" } });
  });

  it("reports a message that does not fit without quoting card data", () => {
    const broken = decodeTool(authorization.wireHex.slice(0, -4));
    expect(broken.ok).toBe(false);
    expect(JSON.stringify(broken)).not.toContain(pan);
  });
});

describe("clearline iso8583 decode of a trace that breaks field rules", () => {
  const trace = JSON.parse(readFileSync(join(fixturesDir, "tolerant", "jpos-iso87a-unsigned-fee-non-tlv-emv.json"), "utf8")) as { wireHex: string };

  it("is tolerant by default: the broken fields raw with findings, the rest decoded and masked", () => {
    const output = decodeTool(trace.wireHex, { dictionary: "jpos-iso87a" });
    if (!output.ok) expect.fail(output.error.message);
    const printed = JSON.parse(output.value) as { fields: Record<string, string>; rawFields: Record<string, string>; findings: { code: string; position: { fieldPath: string[]; byteOffset: number } }[] };
    expect(printed.fields["2"]).toBe("476173*********9123");
    expect(printed.fields["11"]).toBe("000128");
    expect(printed.rawFields).toEqual({ 28: "303030303030313030", 55: "********" });
    expect(printed.findings.map((found) => [found.code, found.position.fieldPath[0], found.position.byteOffset]))
      .toEqual([["ISO8583_FIELD_INVALID_CHARACTER", "28", 65], ["ISO8583_TLV_INVALID", "55", 87]]);
    expect(output.value).not.toContain("4761739001010119123");
  });

  it("with --strict refuses the message at the first broken field, as the endpoint does", () => {
    expect(decodeTool(trace.wireHex, { dictionary: "jpos-iso87a", strict: true }))
      .toMatchObject({ ok: false, error: { code: "ISO8583_FIELD_INVALID_CHARACTER", position: { fieldPath: ["28"] } } });
  });

  it("runs from the compiled command, with --strict exiting 2", async () => {
    const tolerant = await runCliInProcess(["iso8583", "decode", "--dictionary", "jpos-iso87a", trace.wireHex]);
    expect(tolerant.exitCode).toBe(0);
    expect(tolerant.stdout).toContain("ISO8583_TLV_INVALID");
    const strict = await runCliInProcess(["iso8583", "decode", "--strict", "--dictionary", "jpos-iso87a", trace.wireHex]);
    expect(strict.exitCode).toBe(2);
    expect(strict.stderr).toContain("ISO8583_FIELD_INVALID_CHARACTER");
  });
});

describe("clearline iso8583 dictionaries", () => {
  it("lists every shipped dictionary by name", async () => {
    const names = dictionariesTool().split("\n").map((line) => line.split("\t")[0]);
    expect(names).toEqual(["iso87-ascii", "iso87-binary", "jpos-iso87a", "jpos-iso87b", "moov-spec87ascii"]);
    const run = await runCliInProcess(["iso8583", "dictionaries"]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout.split("\n").filter((line) => line !== "").map((line) => line.split("\t")[0])).toEqual(names);
  });
});

describe("clearline iso8583 encode", () => {
  it("packs JSON to hex that decodes back to the same fields", () => {
    const json = JSON.stringify(authorization.expected);
    const encoded = encodeTool(json);
    expect(encoded).toEqual({ ok: true, value: authorization.wireHex });
  });

  it("prefixes a frame header when asked", () => {
    const encoded = encodeTool(JSON.stringify({ mti: "0800", fields: { 7: "0611080000", 11: "000001", 70: "001" } }), { framing: "ascii-4" });
    expect(encoded.ok && Buffer.from(encoded.value, "hex").toString("latin1", 0, 4)).toBe("0055");
  });

  it("reports malformed JSON and malformed messages as typed errors", () => {
    expect(encodeTool("{")).toMatchObject({ ok: false, error: { code: "ISO8583_JSON_INVALID" } });
    expect(encodeTool(JSON.stringify({ mti: "0100", fields: { x: "1" } }))).toMatchObject({ ok: false, error: { code: "ISO8583_JSON_INVALID" } });
    expect(encodeTool(JSON.stringify({ mti: "0100", fields: { 4: "ABC" } }))).toMatchObject({ ok: false, error: { code: "ISO8583_FIELD_INVALID_CHARACTER" } });
  });
});

describe("registerIso8583Command", () => {
  it("adds iso8583 decode and encode to the program", () => {
    const program = new Command("clearline");
    registerIso8583Command(program);
    const iso8583 = program.commands.find((command) => command.name() === "iso8583");
    expect(iso8583?.commands.map((command) => command.name())).toEqual(["decode", "encode", "dictionaries"]);
  });

  it("refuses an argument one byte over the input bound", async () => {
    const { limits } = await import("../../../src/config/limits.ts");
    const program = new Command("clearline").exitOverride();
    registerIso8583Command(program);
    await expect(program.parseAsync(["node", "clearline", "iso8583", "decode", "0".repeat(limits.iso8583.cliInputBytesMax + 1)]))
      .rejects.toThrow(/exceeds/);
  });
});
