import { padded } from "./field-codec.ts";
import type { AsciiTextPlan } from "./field-plan.ts";
import type { FieldValue } from "./types.ts";

/**
 * The fast path for the fields most messages are made of: ASCII character fields, fixed or
 * behind an ASCII length prefix (field-plan.ts). Both functions accept only a plainly valid field
 * and return the offset just past it; anything else returns deferToGeneric, and the caller runs
 * the generic field codec from the same offset, which names the problem in its finding (or
 * encodes a value this path does not take). So this path holds no error text, and a bad field
 * gets exactly the finding, position and masking it always got (decision 0048). A new rule for
 * ASCII text fields goes in both places: here as a refusal, there as the finding that names it.
 */
export const deferToGeneric = -1;

const digit0 = 0x30;
const digit9 = 0x39;

/**
 * Reads the field at `offset` into `fields`. `text` is the whole message as latin1 (one
 * character per byte), so the value is a slice of it rather than one decoder call per field.
 */
export function readAsciiText(
  plan: AsciiTextPlan, bytes: Buffer, text: string, offset: number, end: number, fields: Record<number, FieldValue>,
): number {
  let position = offset;
  let length = plan.lengthMax;
  const prefixDigits = plan.prefixDigits;
  if (prefixDigits > 0) {
    if (position + prefixDigits > end) return deferToGeneric;
    length = 0;
    for (let i = position; i < position + prefixDigits; i++) {
      const digit = (bytes[i] as number) - digit0;
      if (digit < 0 || digit > 9) return deferToGeneric;
      length = length * 10 + digit;
    }
    if (length > plan.lengthMax) return deferToGeneric;
    position += prefixDigits;
  }
  const bodyEnd = position + length;
  if (bodyEnd > end) return deferToGeneric;
  if (plan.numeric) {
    for (let i = position; i < bodyEnd; i++) {
      const byte = bytes[i] as number;
      if (byte < digit0 || byte > digit9) return deferToGeneric;
    }
  } else {
    // 7-bit ASCII, and no NUL: a text field holding one could never be stored (field-codec.ts).
    for (let i = position; i < bodyEnd; i++) {
      const byte = bytes[i] as number;
      if (byte === 0 || byte >= 0x80) return deferToGeneric;
    }
  }
  fields[plan.fieldNumber] = text.slice(position, bodyEnd);
  return bodyEnd;
}

/** Writes `value` at `offset` of `out` with its length prefix. */
export function writeAsciiText(plan: AsciiTextPlan, value: string, out: Buffer, offset: number): number {
  const prefixDigits = plan.prefixDigits;
  const text = prefixDigits === 0 && value.length < plan.lengthMax ? padded(plan.definition, value) : value;
  const units = text.length;
  if (units > plan.lengthMax || (prefixDigits === 0 && units !== plan.lengthMax)) return deferToGeneric;
  const start = offset + prefixDigits;
  if (start + units > out.length) return deferToGeneric;
  let rest = units;
  for (let i = start - 1; i >= offset; i--) {
    const digit = rest % 10;
    out[i] = digit0 + digit;
    rest = (rest - digit) / 10;
  }
  if (plan.numeric) {
    for (let i = 0; i < units; i++) {
      const char = text.charCodeAt(i);
      if (char < digit0 || char > digit9) return deferToGeneric;
      out[start + i] = char;
    }
  } else {
    // The reader's rule (readAsciiText): 7-bit ASCII and no NUL; the generic path names the problem.
    for (let i = 0; i < units; i++) {
      const char = text.charCodeAt(i);
      if (char === 0 || char >= 0x80) return deferToGeneric;
      out[start + i] = char;
    }
  }
  return start + units;
}
