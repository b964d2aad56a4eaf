import type { ErrorCode } from "../../errors/catalog.ts";
import { fail, finding, ok, type Finding, type Result } from "../../errors/finding.ts";
import { describeUnstorable, firstUnstorableCharacter } from "../storable-text.ts";
import { recordLength, type AchFieldSpec, type RecordLayout } from "./layout.ts";

/** Raw text of each field, exactly as in the record (blanks kept), keyed by the layout's field names. */
export type RecordFields = Record<string, string>;

export function decodeFixedWidth(layout: RecordLayout, text: string): RecordFields {
  const fields: RecordFields = {};
  for (const f of layout.fields) fields[f.name] = text.slice(f.start - 1, f.end);
  return fields;
}

export interface FieldProblem {
  code: ErrorCode;
  field: string;
  message: string;
  valueMasked: string;
  severity: "error" | "warning";
  columnOffset?: number;   // from the field's first column, when the problem is one character
}

const digits = /^\d+$/;
const blank = /^ *$/;
const zeros = /^0+$/;
const uppercaseOrDigit = /^[A-Z0-9]$/;

/** Fields whose value is personal enough to show only its last four characters in a finding. */
const maskedFields = new Set(["dfiAccountNumber"]);

export function maskAchFieldValue(field: string, value: string): string {
  if (maskedFields.has(field)) return value.trim().length <= 4 ? "****" : `****${value.trim().slice(-4)}`;
  return value.length > 40 ? value.slice(0, 40) : value;
}

export function isValidDate(yymmdd: string): boolean {
  if (!/^\d{6}$/.test(yymmdd)) return false;
  const month = Number(yymmdd.slice(2, 4));
  const day = Number(yymmdd.slice(4, 6));
  if (month < 1 || month > 12 || day < 1) return false;
  const year = 2000 + Number(yymmdd.slice(0, 2));
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysInMonth = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  return day <= daysInMonth;
}

function problem(
  code: ErrorCode, spec: AchFieldSpec, value: string, message: string,
  severity: "error" | "warning" = "error",
): FieldProblem {
  const valueMasked = maskAchFieldValue(spec.name, value);
  return { code, field: spec.name, message, valueMasked, severity };
}

/**
 * Checks each field against its type and presence from the layout. Returns every problem, never
 * stops at the first: an operator fixes a file in one go.
 */
export function checkFields(layout: RecordLayout, fields: RecordFields, problems: FieldProblem[]): void {
  for (const spec of layout.fields) {
    const value = fields[spec.name] ?? "";
    // A NUL byte cannot be stored in PostgreSQL text: the field is refused, whatever its type.
    const unstorable = firstUnstorableCharacter(value);
    if (unstorable) {
      const shown = maskAchFieldValue(spec.name, value).replaceAll("\u0000", "\\0");
      problems.push({ ...problem("TEXT_CHARACTER_INVALID", spec, value, `${spec.name} ${describeUnstorable(unstorable)}`), valueMasked: shown, columnOffset: unstorable.index });
      continue;
    }
    const isBlank = blank.test(value);
    if (spec.value !== undefined) {
      if (value !== spec.value) problems.push(problem("ACH_FIELD_VALUE_INVALID", spec, value, `${spec.name} is ${JSON.stringify(value)}, must be ${JSON.stringify(spec.value)}`));
      continue;
    }
    // A blank Required date is no date: the same warning as 000000 or 251332 (decision 0093).
    if (isBlank && spec.presence !== "required") {
      if (spec.presence === "mandatory") problems.push(problem("ACH_MANDATORY_FIELD_MISSING", spec, value, `${spec.name} is blank`));
      continue;
    }
    switch (spec.type) {
      case "numeric":
      case "amount":
      case "routing":
        if (!digits.test(value)) {
          const shown = JSON.stringify(maskAchFieldValue(spec.name, value));
          const message = `${spec.name} ${shown} is not numeric`;
          problems.push(problem("ACH_FIELD_NOT_NUMERIC", spec, value, message));
        }
        break;
      case "date":
        if (!isValidDate(value)) problems.push(problem("ACH_DATE_INVALID", spec, value, `${spec.name} ${JSON.stringify(value)} is not a YYMMDD date`, "warning"));
        break;
      case "time":
        if (!/^([01]\d|2[0-3])[0-5]\d$/.test(value)) problems.push(problem("ACH_TIME_INVALID", spec, value, `${spec.name} ${JSON.stringify(value)} is not an HHMM time`, "warning"));
        break;
      case "alphanumeric":
        if (spec.presence === "mandatory" && spec.length > 1 && zeros.test(value.trim())) {
          problems.push(problem("ACH_MANDATORY_FIELD_MISSING", spec, value, `${spec.name} is all zeros`));
        }
        break;
    }
  }
}

export function isFileIdModifier(value: string): boolean {
  return uppercaseOrDigit.test(value);
}

/**
 * Pads a value to its field as the layout says (numbers right-justified with zeros, text
 * left-justified with blanks) and lays the fields out into one 94-character record. A missing
 * value takes the field's constant, else zeros for a mandatory number, else blanks.
 */
export function encodeFixedWidth(layout: RecordLayout, values: Record<string, string | undefined>): Result<string, Finding> {
  let text = "";
  for (const spec of layout.fields) {
    let value = values[spec.name] ?? spec.value;
    if (value === undefined) {
      const isNumber = spec.type === "numeric" || spec.type === "amount" || spec.type === "routing";
      value = isNumber && spec.presence === "mandatory" ? "0".repeat(spec.length) : " ".repeat(spec.length);
    }
    if (value.length > spec.length) {
      return fail(finding("ACH_WRITE_FIELD_TOO_LONG", `${layout.name}.${spec.name} holds ${value.length} characters, its field ${spec.length}`, { field: spec.name, recordType: layout.recordTypeCode }));
    }
    const pad = spec.type === "alphanumeric" || spec.type === "date" || spec.type === "time" ? " " : "0";
    text += spec.justify === "right" ? value.padStart(spec.length, pad) : value.padEnd(spec.length, pad);
  }
  return ok(text.length === recordLength ? text : text.slice(0, recordLength));
}
