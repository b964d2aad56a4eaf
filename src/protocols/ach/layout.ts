import layoutsJson from "../../../protocols/nacha/record-layouts.json" with { type: "json" };
import { assert } from "../../assert.ts";

export type AchFieldType = "numeric" | "alphanumeric" | "routing" | "amount" | "date" | "time";
// NACHA's designations: Mandatory (M) fields the ACH operator rejects when blank, Required (R)
// fields it does not reject (a receiver may), Optional (O).
export type Presence = "mandatory" | "required" | "optional";
const presences: readonly string[] = ["mandatory", "required", "optional"];

/** One field of a NACHA record, as described in protocols/nacha/record-layouts.json. */
export interface AchFieldSpec {
  name: string;
  start: number;        // 1-based, inclusive
  end: number;          // 1-based, inclusive
  length: number;
  type: AchFieldType;
  justify: "left" | "right";
  presence: Presence;
  value?: string;       // the one value the field may hold (record size "094", format code "1", ...)
}

export interface RecordLayout {
  name: string;
  recordTypeCode: string;
  addendaTypeCode?: string;
  fields: AchFieldSpec[];
  byName: Map<string, AchFieldSpec>;
}

export const recordLength = 94;
export const blockingFactor = 10;

const fieldTypes: readonly string[] = ["numeric", "alphanumeric", "routing", "amount", "date", "time"];

interface LayoutJson {
  name: string;
  recordTypeCode: string;
  addendaTypeCode?: string;
  fields: { name: string; start: number; end: number; type: string; justify: string; presence: string; value?: string }[];
}

/**
 * Turns a layout from the data file into a checked one: fields contiguous from 1, no overlap, the
 * last ending at 94, names unique, constants as wide as their field. A layout that breaks this is
 * a bug in the data file and stops the process at load time.
 */
export function loadLayout(json: LayoutJson): RecordLayout {
  assert(json.fields.length > 0, `layout ${json.name} has fields`);
  const fields: AchFieldSpec[] = [];
  const byName = new Map<string, AchFieldSpec>();
  let next = 1;
  for (const f of json.fields) {
    assert(f.start === next, `layout ${json.name}: field ${f.name} starts at ${f.start}, expected ${next} (contiguous, no overlap)`);
    assert(f.end >= f.start, `layout ${json.name}: field ${f.name} ends before it starts`);
    assert(fieldTypes.includes(f.type), `layout ${json.name}: field ${f.name} has a known type`);
    assert(f.justify === "left" || f.justify === "right", `layout ${json.name}: field ${f.name} justify is left or right`);
    assert(presences.includes(f.presence), `layout ${json.name}: field ${f.name} presence`);
    // A blank Required field is checked by its type's check, which for a date is a warning.
    const requiredDate = f.presence !== "required" || f.type === "date";
    assert(requiredDate, `layout ${json.name}: field ${f.name} is required only if a date`);
    assert(!byName.has(f.name), `layout ${json.name}: field ${f.name} is unique`);
    const length = f.end - f.start + 1;
    assert(f.value === undefined || f.value.length === length, `layout ${json.name}: constant of ${f.name} fills its field`);
    const spec: AchFieldSpec = {
      name: f.name, start: f.start, end: f.end, length, type: f.type as AchFieldType,
      justify: f.justify, presence: f.presence as Presence,
    };
    if (f.value !== undefined) spec.value = f.value;
    fields.push(spec);
    byName.set(f.name, spec);
    next = f.end + 1;
  }
  assert(next === recordLength + 1, `layout ${json.name} ends at ${next - 1}, expected ${recordLength}`);
  assert(fields[0]?.name === "recordTypeCode" && fields[0].value === json.recordTypeCode, `layout ${json.name} starts with its record type code`);
  const layout: RecordLayout = { name: json.name, recordTypeCode: json.recordTypeCode, fields, byName };
  if (json.addendaTypeCode !== undefined) {
    assert(byName.get("addendaTypeCode")?.value === json.addendaTypeCode, `layout ${json.name} carries its addenda type code`);
    layout.addendaTypeCode = json.addendaTypeCode;
  }
  return layout;
}

assert(layoutsJson.recordLength === recordLength && layoutsJson.blockingFactor === blockingFactor, "record layouts describe 94-character records in blocks of 10");

const layouts = new Map<string, RecordLayout>();
for (const json of layoutsJson.layouts as LayoutJson[]) {
  assert(!layouts.has(json.name), `layout name ${json.name} is unique`);
  layouts.set(json.name, loadLayout(json));
}

export function layoutNamed(name: string): RecordLayout {
  const layout = layouts.get(name);
  assert(layout, `layout ${name} exists in protocols/nacha/record-layouts.json`);
  return layout;
}

export function hasLayout(name: string): boolean {
  return layouts.has(name);
}

export function allLayouts(): RecordLayout[] {
  return [...layouts.values()];
}
