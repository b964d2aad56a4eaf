import { fail, ok, type Finding, type Result } from "../../errors/finding.ts";
import { iso8583Error } from "./errors.ts";
import type { FieldValue, Message } from "./types.ts";

/**
 * Messages as JSON, for the CLI and for fixtures: { "mti": "0100", "fields": { "2": "...",
 * "90": { ...subfields }, "55": [{ "tag": "9F02", "value": "..." }] } }. A Message already is this
 * shape; reading one back checks the shape, and pack checks the values against the dictionary.
 */

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isFieldValue(value: unknown): value is FieldValue {
  if (typeof value === "string") return true;
  if (Array.isArray(value)) return value.every((element) => isRecord(element) && typeof element.tag === "string" && typeof element.value === "string");
  return isRecord(value) && Object.values(value).every((part) => typeof part === "string");
}

export function messageFromJson(json: unknown): Result<Message, Finding> {
  const invalid = (what: string, fieldPath?: string[]) => fail(iso8583Error("ISO8583_JSON_INVALID", what, fieldPath, 0));
  if (!isRecord(json)) return invalid("a message is an object { mti, fields }");
  if (typeof json.mti !== "string") return invalid("mti must be a string", ["0"]);
  if (!isRecord(json.fields)) return invalid("fields must be an object keyed by field number");
  const fields: Record<number, FieldValue> = {};
  for (const [key, value] of Object.entries(json.fields)) {
    if (!/^[1-9]\d{0,2}$/.test(key)) return invalid("field keys are field numbers", [key.slice(0, 8)]);
    if (!isFieldValue(value)) return invalid("a field value is text, subfields of text, or a list of { tag, value }", [key]);
    fields[Number(key)] = value;
  }
  if (json.bitmapCount !== undefined) {
    if (typeof json.bitmapCount !== "number") return invalid("bitmapCount must be a number", ["1"]);
    return ok({ mti: json.mti, fields, bitmapCount: json.bitmapCount });
  }
  return ok({ mti: json.mti, fields });
}
