import { describe, expect, it } from "vitest";
import {
  iso87AsciiDictionary as ascii, maskMessage, maskPan, maskTrack, pack, unpack, type Message,
} from "../../../src/protocols/iso8583/index.ts";
import { loadFixture } from "./support/fixtures.ts";

const pan = "4761739001010119";

describe("card data masking", () => {
  it("keeps the BIN and the last four digits of a PAN", () => {
    expect(maskPan(pan)).toBe("476173******0119");
    expect(maskPan("4761739001010119123")).toBe("476173*********9123");
  });

  it("keeps only the last four digits of a number too short for BIN and last four", () => {
    expect(maskPan("123456789012")).toBe("********9012");
    expect(maskPan("1234")).toBe("****");
  });

  it("masks track data after the PAN entirely", () => {
    expect(maskTrack(`${pan}=22122011758928889`)).toBe("476173******0119" + "*".repeat(18));
    expect(maskTrack(`B${pan}^DOE/JOHN^2212201`)).toBe("B476173******0119" + "*".repeat(17));
  });

  it("masks PAN, track 2, PIN block and EMV values of a message, and nothing else", () => {
    const message: Message = {
      mti: "0200",
      fields: { 2: pan, 4: "000000004000", 35: `${pan}=2212`, 52: "7434F67813BAE545", 55: [{ tag: "9F26", value: "8E19D85D6A3C4F21" }] },
    };
    expect(maskMessage(message, ascii)).toEqual({
      mti: "0200",
      fields: { 2: "476173******0119", 4: "000000004000", 35: "476173******0119*****", 52: "*".repeat(16), 55: [{ tag: "9F26", value: "*".repeat(16) }] },
    });
  });

  it("masks fields 2, 35, 45, 52 and 55 even without a dictionary", () => {
    const masked = maskMessage({ mti: "0100", fields: { 2: pan, 45: `B${pan}^X`, 52: "00" } });
    expect(JSON.stringify(masked)).not.toContain(pan);
    expect(masked.fields[52]).toBe("**");
  });

  it("masks a field the dictionary marks sensitive", () => {
    expect(maskMessage({ mti: "0100", fields: { 34: "5500000000000004" } }, ascii).fields[34]).toBe("550000******0004");
  });

  it("leaves the message it masks untouched", () => {
    const message: Message = { mti: "0100", fields: { 2: pan } };
    maskMessage(message, ascii);
    expect(message.fields[2]).toBe(pan);
  });
});

describe("errors carry masked values only", () => {
  const authorization = loadFixture("0100-authorization-request.json");
  const wire = Buffer.from(authorization.wireHex, "hex");

  it("an unpack error in a field after the PAN does not quote the PAN", () => {
    const broken = Buffer.from(wire);
    broken[broken.length - 1] = 0x41; // field 49 currency code is an, so break the numeric field 22 instead
    const at22 = wire.indexOf(Buffer.from("051"));
    broken[at22] = 0x58;
    const result = unpack(broken, ascii);
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).not.toContain(pan);
  });

  it("an unpack error inside track 2 quotes it masked", () => {
    const broken = Buffer.from(wire);
    const at35 = wire.indexOf(Buffer.from(`${pan}=`)); // the PAN inside track 2 follows the one in field 2
    broken[at35 + 3] = 0xff;
    const result = unpack(broken, ascii);
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).not.toContain(pan);
    expect(JSON.stringify(result)).not.toContain(pan.slice(6, 12));
  });

  it("a message whose bytes shifted puts no run of card digits into an error", () => {
    // Drop the PAN length prefix: the PAN digits are then read as a length and as other fields.
    const shifted = Buffer.concat([wire.subarray(0, 20), wire.subarray(22)]);
    const result = unpack(shifted, ascii);
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).not.toMatch(/\d{12,}/);
  });

  it("a pack error on a too-long PAN quotes it masked", () => {
    const result = pack({ mti: "0100", fields: { 2: `${pan}0000` } }, ascii);
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).not.toContain(pan);
  });

  it("a pack error on a bad PIN block does not quote it", () => {
    const result = pack({ mti: "0200", fields: { 52: "7434F67813BAE5" } }, ascii);
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).not.toContain("7434F67813BAE5");
  });
});
