import { describe, expect, it } from "vitest";
import { writePacs002 } from "../../../src/protocols/iso20022/pacs002-writer.ts";
import { fixture, read } from "./helpers.ts";

function statusReportForMulti() {
  const ingested = read(fixture("pacs008-multi.xml"));
  const [first, , third] = ingested.transactions;
  return writePacs002({
    messageId: "STS-0001&<1>",
    creationDateTime: "2025-03-10T09:05:00Z",
    originalMessageId: ingested.header?.values["MsgId"] ?? "",
    originalMessageNameId: ingested.header?.message.id ?? "",
    instructingAgentBic: "BANKGB2LXXX",
    instructedAgentBic: "BANKDEFFXXX",
    transactions: [
      { originalInstrId: first?.values["InstrId"], originalEndToEndId: first?.values["EndToEndId"], originalUetr: first?.values["UETR"], status: "ACSC" },
      { originalEndToEndId: third?.values["EndToEndId"], originalTxId: third?.values["TxId"], status: "RJCT", reasonCode: "AC01", additionalInformation: "Account <closed> & gone" },
    ],
  });
}

describe("pacs.002 status report writer", () => {
  it("writes a report our own reader reads back with every status, reason and original identifier", () => {
    const written = statusReportForMulti();
    expect(written.ok).toBe(true);
    if (!written.ok) return;
    const result = read(written.value);
    expect(result.allFindings).toEqual([]);
    expect(result.header?.message.id).toBe("pacs.002.001.10");
    expect(result.header?.values).toMatchObject({ MsgId: "STS-0001&<1>", OrgnlMsgId: "CLR-20250310-0001" });
    expect(result.transactions.map((t) => [t.values["OrgnlInstrId"], t.values["OrgnlTxId"], t.values["TxSts"], t.values["StsRsnCd"], t.values["StsRsnAddtlInf"]])).toEqual([
      ["000123", undefined, "ACSC", undefined, undefined],
      [undefined, "000TX3", "RJCT", "AC01", "Account <closed> & gone"],
    ]);
  });

  it("refuses a rejection without a reason code", () => {
    const written = writePacs002({ messageId: "S", creationDateTime: "2025-03-10T09:05:00Z", originalMessageId: "M", originalMessageNameId: "pacs.008.001.08", transactions: [{ originalEndToEndId: "E", status: "RJCT" }] });
    expect(written.ok ? [] : written.error.map((f) => f.code)).toEqual(["ISO20022_STATUS_REASON_MISSING"]);
  });

  it("refuses a status line that names no original transaction", () => {
    const written = writePacs002({ messageId: "S", creationDateTime: "2025-03-10T09:05:00Z", originalMessageId: "M", originalMessageNameId: "pacs.008.001.08", transactions: [{ status: "ACSC" }] });
    expect(written.ok ? [] : written.error.map((f) => f.code)).toEqual(["ISO20022_FIELD_MISSING"]);
  });

  it.each(["10", "11", "12", "13", "14"])("writes version %s, which the reader detects", (version) => {
    const written = writePacs002({ version, messageId: "S", creationDateTime: "2025-03-10T09:05:00Z", originalMessageId: "M", originalMessageNameId: "pacs.008.001.08", transactions: [{ originalEndToEndId: "E", status: "ACSC" }] });
    expect(written.ok && read(written.value).header?.message.id).toBe(`pacs.002.001.${version}`);
  });
});
