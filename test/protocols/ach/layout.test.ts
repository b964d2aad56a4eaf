import { describe, expect, it } from "vitest";
import { InvariantError } from "../../../src/assert.ts";
import { allLayouts, loadLayout, recordLength } from "../../../src/protocols/ach/layout.ts";

const field = (name: string, start: number, end: number, value?: string) => ({ name, start, end, type: "alphanumeric", justify: "left", presence: "optional", ...(value ? { value } : {}) });

describe("NACHA record layouts", () => {
  it("cover positions 1 to 94 without gap or overlap for every record and addenda type", () => {
    expect(allLayouts().length).toBeGreaterThanOrEqual(22);
    for (const layout of allLayouts()) {
      let next = 1;
      for (const f of layout.fields) {
        expect(f.start, `${layout.name}.${f.name}`).toBe(next);
        next = f.end + 1;
      }
      expect(next - 1, layout.name).toBe(recordLength);
    }
  });

  it("include every addenda type the issue names: 02, 05, 98, 99 in three forms, IAT 10 to 18", () => {
    const names = allLayouts().map((l) => l.name);
    for (const n of ["addenda-02", "addenda-05", "addenda-98", "addenda-99", "addenda-99-dishonored", "addenda-99-contested", ...["10", "11", "12", "13", "14", "15", "16", "17", "18"].map((t) => `addenda-${t}`)]) {
      expect(names).toContain(n);
    }
  });

  it("refuses a layout with a gap between fields", () => {
    expect(() => loadLayout({ name: "gap", recordTypeCode: "1", fields: [field("recordTypeCode", 1, 1, "1"), field("rest", 3, 94)] })).toThrow(InvariantError);
  });

  it("refuses a layout with overlapping fields", () => {
    expect(() => loadLayout({ name: "overlap", recordTypeCode: "1", fields: [field("recordTypeCode", 1, 1, "1"), field("a", 2, 50), field("b", 50, 94)] })).toThrow(InvariantError);
  });

  it("refuses a layout that ends before position 94", () => {
    expect(() => loadLayout({ name: "short", recordTypeCode: "1", fields: [field("recordTypeCode", 1, 1, "1"), field("rest", 2, 93)] })).toThrow(InvariantError);
  });

  it("refuses a layout that runs past position 94", () => {
    expect(() => loadLayout({ name: "long", recordTypeCode: "1", fields: [field("recordTypeCode", 1, 1, "1"), field("rest", 2, 95)] })).toThrow(InvariantError);
  });
});
