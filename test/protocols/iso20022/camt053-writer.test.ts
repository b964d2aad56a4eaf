import { describe, expect, it } from "vitest";
import { writeCamt053, type Camt053Input } from "../../../src/protocols/iso20022/camt053-writer.ts";
import { CamtStatementReader } from "../../../src/protocols/statement/camt-reader.ts";

const statement: Camt053Input = {
  messageId: "M1", creationDateTime: "2026-12-05T18:00:00.000Z", statementId: "S1",
  accountId: "alice", currency: "USD", openingDate: "2026-12-04", statementDate: "2026-12-05",
  openingMinor: -500n, closingMinor: 700n,
  entries: [
    { entryRef: "1", accountServicerRef: "R1", amountMinor: 1_500n, direction: "C",
      bookingDate: "2026-12-05", valueDate: "2026-12-07", bankTransactionCode: "ach-credit",
      additionalInformation: "t1#1" },
    { entryRef: "2", accountServicerRef: "R2", amountMinor: 300n, direction: "D",
      bookingDate: "2026-12-05", valueDate: "2026-12-05", bankTransactionCode: "ach-debit" },
  ],
};

describe("the camt.053.001.08 writer", () => {
  it("writes a negative opening balance as DBIT and reads back both balances and entries", () => {
    const written = writeCamt053(statement);
    if (!written.ok) throw new Error(written.error[0]?.message);
    expect(written.value).toContain("urn:iso:std:iso:20022:tech:xsd:camt.053.001.08");
    const reader = new CamtStatementReader({ itemsMax: 10, partsPerItemMax: 1, findingsMax: 10 });
    const events = [...reader.push(Buffer.from(written.value)), ...reader.finish()];
    const end = events.find((e) => e.type === "end");
    expect(end).toMatchObject({ head: { statementRef: "S1", accountIdentifier: "alice",
      currency: "USD", openingMinor: -500n, closingMinor: 700n }, findings: [] });
    const items = events.flatMap((e) => (e.type === "item" ? [e.item] : []));
    expect(items.map((i) => [i.itemKey, i.direction, i.amountMinor, i.valueDate, i.description]))
      .toEqual([["svcr:R1", "C", 1_500n, "2026-12-07", "t1#1"],
        ["svcr:R2", "D", 300n, "2026-12-05", undefined]]);
  });

  it("refuses a reference longer than its Max35Text at its path", () => {
    const written = writeCamt053({ ...statement, statementId: "S".repeat(36) });
    expect(written.ok ? [] : written.error.map((f) => [f.code, f.position.xmlPath]))
      .toEqual([["ISO20022_FIELD_TOO_LONG", "/Document/BkToCstmrStmt/Stmt/Id"]]);
  });

  it("asserts that the entries lead from the opening to the closing balance", () => {
    expect(() => writeCamt053({ ...statement, closingMinor: 701n }))
      .toThrow(/opening balance plus its entries is its closing balance/);
  });
});
