import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { deferToGeneric, readAsciiText, writeAsciiText } from "../../../src/protocols/iso8583/ascii-text.ts";
import { packField, unpackField, type FieldWriter } from "../../../src/protocols/iso8583/field-codec.ts";
import { fieldPlansOf, type AsciiTextPlan } from "../../../src/protocols/iso8583/field-plan.ts";
import { dictionaryByName, iso87AsciiDictionary, type FieldValue } from "../../../src/protocols/iso8583/index.ts";

/**
 * The fast path for ASCII text fields (decision 0048) must agree with the generic field codec
 * wherever it does not defer to it: same bytes written, same value and end offset read. Where it
 * defers, the generic codec decides alone, so findings cannot differ.
 */
const plannedFields: AsciiTextPlan[] = ["iso87-ascii", "jpos-iso87a", "moov-spec87ascii"].flatMap((name) => {
  const plans = fieldPlansOf(dictionaryByName(name)!);
  return plans.filter((plan): plan is AsciiTextPlan => plan !== undefined);
});
const tlvElementsMax = 64;
// Mostly valid characters, with the ones the rules refuse mixed in: letters and the neighbours of the digits (/ :) in numbers, NUL, DEL, é, a surrogate half.
const character = fc.constantFrom(..."0123456789", ..."AZaz =-/:", "\u0000", "\u007f", "\u00e9", "\ud800");

describe("ASCII text fast path", () => {
  it("is planned for the fields of the ASCII dictionaries and for no BCD, binary or composite field", () => {
    const plans = fieldPlansOf(iso87AsciiDictionary);
    expect(plans[2]?.prefixDigits).toBe(2);
    expect(plans[4]?.numeric).toBe(true);
    expect(plans[52]).toBeUndefined(); // b (binary) field
    expect(plans[90]).toBeUndefined(); // positional composite
    expect(fieldPlansOf(dictionaryByName("iso87-binary")!)[3]).toBeUndefined(); // BCD
  });

  it("writes the same bytes as the generic field codec whenever it writes at all", () => {
    let written = 0;
    // Lengths around the field's maximum as often as short ones; all digits as often as mixed characters.
    const planAndValue = fc.constantFrom(...plannedFields).chain((plan) => {
      const nearMax = { minLength: Math.max(0, plan.lengthMax - 2), maxLength: plan.lengthMax + 2 };
      const short = { maxLength: 40, size: "max" as const };
      const digit = fc.constantFrom(..."0123456789");
      const text = (constraints: { minLength?: number; maxLength: number }) =>
        fc.oneof(fc.array(digit, constraints), fc.array(character, constraints)).map((chars) => chars.join(""));
      return fc.tuple(fc.constant(plan), fc.oneof(text(nearMax), text(short)));
    });
    fc.assert(fc.property(planAndValue, ([plan, value]) => {
      const fast = Buffer.alloc(256, 0xaa);
      const end = writeAsciiText(plan, value, fast, 3);
      const generic: FieldWriter = { buffer: Buffer.alloc(256, 0xaa), offset: 3 };
      const problem = packField(plan.definition, value, generic, tlvElementsMax);
      if (end === deferToGeneric) return;
      written++;
      expect(problem).toBeUndefined();
      expect(end).toBe(generic.offset);
      expect(fast.subarray(0, end)).toEqual(generic.buffer.subarray(0, end));
    }), { numRuns: 3_000 });
    expect(written).toBeGreaterThan(300); // the comparison ran, not only the deferrals
  });

  it("reads the same value and end as the generic field codec whenever it reads at all", () => {
    let read = 0;
    // A body of mostly digits and letters behind a length prefix that is mostly right.
    const byte = fc.oneof({ weight: 12, arbitrary: fc.integer({ min: 0x30, max: 0x39 }) }, { weight: 3, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 255 }) });
    const body = fc.array(byte, { maxLength: 60, size: "max" });
    const lengthSkew = fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: -3, max: 3 }) });
    fc.assert(fc.property(fc.constantFrom(...plannedFields), body, lengthSkew, (plan, raw, skew) => {
      const bodyBytes = plan.prefixDigits === 0 ? raw.concat(Array<number>(plan.lengthMax).fill(0x30)).slice(0, plan.lengthMax + skew) : raw;
      const prefix = plan.prefixDigits === 0 ? "" : String(Math.max(0, bodyBytes.length + skew)).padStart(plan.prefixDigits, "0").slice(-plan.prefixDigits);
      const wire = Buffer.concat([Buffer.from(" " + prefix, "latin1"), Buffer.from(bodyBytes)]);
      const fields: Record<number, FieldValue> = {};
      const end = readAsciiText(plan, wire, wire.toString("latin1"), 1, wire.length, fields);
      const generic = unpackField(plan.definition, wire, 1, wire.length, tlvElementsMax);
      if (end === deferToGeneric) return;
      read++;
      expect("code" in generic).toBe(false);
      if ("code" in generic) return;
      expect(end).toBe(generic.next);
      expect(fields[plan.fieldNumber]).toBe(generic.value);
    }), { numRuns: 3_000 });
    expect(read).toBeGreaterThan(300);
  });
});
