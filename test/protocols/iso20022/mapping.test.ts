import { describe, expect, it } from "vitest";
import { mappingFor, supportedFamilies, supportedVersions } from "../../../src/protocols/iso20022/mapping.ts";
import { parseMessageIdentifier } from "../../../src/protocols/iso20022/message-identifier.ts";

describe("path mappings as data", () => {
  it("maps at least the versions the issue requires", () => {
    expect(supportedVersions("pain.001")).toEqual(expect.arrayContaining(["03", "09"]));
    expect(supportedVersions("pacs.008")).toEqual(expect.arrayContaining(["02", "07", "08", "13"]));
    expect(supportedVersions("pacs.002")).toEqual(expect.arrayContaining(["03", "10", "14"]));
    expect(supportedVersions("pacs.004")).toEqual(expect.arrayContaining(["02", "09", "13"]));
    expect(supportedVersions("camt.056")).toEqual(["08", "09", "10", "11"]);
    expect(supportedVersions("camt.053")).toEqual(expect.arrayContaining(["02", "08", "13"]));
    expect(supportedVersions("camt.054")).toEqual(expect.arrayContaining(["02", "08", "12", "13"]));
    expect(supportedFamilies()).toEqual(expect.arrayContaining(["pacs.028", "camt.029"]));
  });

  it("applies a version override only to its version", () => {
    expect(mappingFor("pain.001", "03")?.context["DbtrAgtBIC"]?.paths).toEqual(["DbtrAgt/FinInstnId/BIC"]);
    expect(mappingFor("pain.001", "09")?.context["DbtrAgtBIC"]?.paths).toEqual(["DbtrAgt/FinInstnId/BICFI", "DbtrAgt/FinInstnId/BIC"]);
  });

  it("reads message identifiers from ISO, national-variant and AppHdr forms", () => {
    expect(parseMessageIdentifier("urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08")?.id).toBe("pacs.008.001.08");
    expect(parseMessageIdentifier("http://www.six-interbank-clearing.com/de/pain.001.001.03.ch.02.xsd")).toMatchObject({ id: "pain.001.001.03", localVariant: ".ch.02" });
    expect(parseMessageIdentifier("pacs.002.001.10")?.family).toBe("pacs.002");
    expect(parseMessageIdentifier("urn:example:nothing")).toBeUndefined();
  });
});
