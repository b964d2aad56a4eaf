import camt029 from "../../../protocols/iso20022/camt.029.json" with { type: "json" };
import camt053 from "../../../protocols/iso20022/camt.053.json" with { type: "json" };
import camt054 from "../../../protocols/iso20022/camt.054.json" with { type: "json" };
import camt056 from "../../../protocols/iso20022/camt.056.json" with { type: "json" };
import head001 from "../../../protocols/iso20022/head.001.json" with { type: "json" };
import pacs002 from "../../../protocols/iso20022/pacs.002.json" with { type: "json" };
import pacs004 from "../../../protocols/iso20022/pacs.004.json" with { type: "json" };
import pacs008 from "../../../protocols/iso20022/pacs.008.json" with { type: "json" };
import pacs028 from "../../../protocols/iso20022/pacs.028.json" with { type: "json" };
import pain001 from "../../../protocols/iso20022/pain.001.json" with { type: "json" };
import pain002 from "../../../protocols/iso20022/pain.002.json" with { type: "json" };
import pain008 from "../../../protocols/iso20022/pain.008.json" with { type: "json" };
import { assert } from "../../assert.ts";
import { limits } from "../../config/limits.ts";

/**
 * Where each field of a message family lives, as data (protocols/iso20022/*.json). The reader
 * resolves these paths; no TypeScript file names an ISO 20022 path of a particular version.
 */
export type Iso20022FieldType =
  "text" | "uetr" | "amount" | "date" | "dateTime" | "dateOrDateTime" | "count" | "decimal" | "bic";

export interface Iso20022FieldSpec {
  paths: string[];        // alternatives, first present wins; "A/B/@Attr" reads an attribute
  type: Iso20022FieldType;
  required: boolean;
  maxLength?: number;
  identifier: boolean;    // listed among a transaction's identifiers (inspect, conformance)
  /**
   * The path's first element may repeat (ChrgsInf): each occurrence up to this many is read, the
   * first as `<name>`, the n-th as `<name>.<n>`; one more is a finding. One path only.
   */
  repeats?: number;
}

export type FieldTable = Record<string, Iso20022FieldSpec>;

export interface Control {
  level: "header" | "context";
  count: string;          // field holding the announced number of transactions
  sum: string;            // field holding the announced sum of amounts
  severity: "error" | "warning";
}

/**
 * A header amount that ISO 20022 defines as the sum of every transaction's amountField, in one
 * currency (pacs.008 TotalInterbankSettlementAmountAndSumRule and ...AmountRule).
 */
export interface TotalControl {
  total: string;          // header amount field, e.g. TtlIntrBkSttlmAmt
  severity: "error" | "warning";
}

export interface MessageMapping {
  family: string;         // "pacs.008"
  name: string;
  kind: string;           // what one transaction of this family is: credit, status, return, ...
  versions: string[];     // "08", "09", ...
  messageRoot: string;    // the Document's child, e.g. FIToFICstmrCdtTrf
  headerElements: string[];
  contextPath?: string[]; // e.g. ["PmtInf"]: a block whose fields every transaction inside it carries
  transactionPath: string[];
  amountField?: string;
  header: FieldTable;
  context: FieldTable;
  transaction: FieldTable;
  controls: Control[];
  totals: TotalControl[];
}

interface RawField {
  paths: string[]; type?: string; required?: boolean; maxLength?: number; identifier?: boolean;
  repeats?: number;
}
type RawTable = Record<string, RawField>;
interface RawMapping {
  family: string; name: string; kind: string; versions: string[]; messageRoot: string;
  headerElements: string[]; contextPath?: string; transactionPath: string; amountField?: string;
  header: RawTable; context?: RawTable; transaction: RawTable;
  controls: { level: string; count: string; sum: string; severity: string }[];
  totals?: { total: string; severity: string }[];
  versionOverrides?: Record<string, { header?: RawTable; context?: RawTable; transaction?: RawTable }>;
}

const fieldTypes: readonly string[] = ["text", "uetr", "amount", "date", "dateTime", "dateOrDateTime", "count", "decimal", "bic"];
const elementName = /^[A-Z][A-Za-z0-9]*$/;
const pathStep = /^(?:[A-Z][A-Za-z0-9]*|@[A-Za-z][A-Za-z0-9]*)$/;

function loadTable(raw: RawTable | undefined, where: string, firstSteps?: readonly string[]): FieldTable {
  const table: FieldTable = {};
  for (const [name, field] of Object.entries(raw ?? {})) {
    assert(/^[A-Za-z][A-Za-z0-9]*$/.test(name), `${where}.${name}: field name is alphanumeric`);
    assert(Array.isArray(field.paths) && field.paths.length > 0, `${where}.${name}: at least one path`);
    for (const path of field.paths) {
      const steps = path.split("/");
      assert(steps.every((step, i) => pathStep.test(step) && (!step.startsWith("@") || i === steps.length - 1)), `${where}.${name}: path ${path} is Element/Element[/@attribute]`);
      if (firstSteps) assert(firstSteps.includes(steps[0] ?? ""), `${where}.${name}: path ${path} starts at a header element`);
    }
    const type = field.type ?? "text";
    assert(fieldTypes.includes(type), `${where}.${name}: type ${type} is known`);
    assert(field.maxLength === undefined || (Number.isInteger(field.maxLength) && field.maxLength > 0), `${where}.${name}: maxLength is positive`);
    const spec: Iso20022FieldSpec = {
      paths: field.paths, type: type as Iso20022FieldType, required: field.required ?? false,
      identifier: field.identifier ?? false,
    };
    if (field.maxLength !== undefined) spec.maxLength = field.maxLength;
    if (field.repeats !== undefined) {
      assert(Number.isInteger(field.repeats) && field.repeats > 1
        && field.repeats <= limits.iso20022.fieldRepeatsMax,
        `${where}.${name}: repeats is 2..${limits.iso20022.fieldRepeatsMax}`);
      assert(field.paths.length === 1 && (field.paths[0] ?? "").includes("/")
        && field.required !== true,
        `${where}.${name}: a repeated field has one optional path below its repeated element`);
      spec.repeats = field.repeats;
    }
    table[name] = spec;
  }
  return table;
}

function splitPath(path: string, where: string): string[] {
  const steps = path.split("/");
  assert(steps.every((s) => elementName.test(s)), `${where}: ${path} is a path of element names`);
  return steps;
}

function loadMapping(raw: RawMapping, version: string): MessageMapping {
  const where = `${raw.family}.${version}`;
  assert(/^[a-z]{4}\.\d{3}$/.test(raw.family), `${where}: family is xxxx.nnn`);
  assert(elementName.test(raw.messageRoot), `${where}: message root is an element name`);
  assert(raw.headerElements.length > 0 && raw.headerElements.every((e) => elementName.test(e)), `${where}: header elements are element names`);
  const override = raw.versionOverrides?.[version] ?? {};
  const transactionPath = splitPath(raw.transactionPath, `${where}.transactionPath`);
  const mapping: MessageMapping = {
    family: raw.family, name: raw.name, kind: raw.kind, versions: raw.versions, messageRoot: raw.messageRoot,
    headerElements: raw.headerElements, transactionPath,
    header: { ...loadTable(raw.header, `${where}.header`, raw.headerElements), ...loadTable(override.header, `${where}.override.header`, raw.headerElements) },
    context: { ...loadTable(raw.context, `${where}.context`), ...loadTable(override.context, `${where}.override.context`) },
    transaction: { ...loadTable(raw.transaction, `${where}.transaction`), ...loadTable(override.transaction, `${where}.override.transaction`) },
    controls: [], totals: [],
  };
  if (raw.contextPath !== undefined) {
    const contextPath = splitPath(raw.contextPath, `${where}.contextPath`);
    assert(contextPath.length < transactionPath.length && contextPath.every((s, i) => transactionPath[i] === s), `${where}: the transaction path lies inside the context path`);
    mapping.contextPath = contextPath;
  } else {
    assert(Object.keys(mapping.context).length === 0, `${where}: context fields need a contextPath`);
  }
  assert(!raw.headerElements.includes(transactionPath[0] ?? ""), `${where}: transactions are not header elements`);
  if (raw.amountField !== undefined) {
    assert(mapping.transaction[raw.amountField]?.type === "amount", `${where}: amountField ${raw.amountField} is an amount field of the transaction`);
    mapping.amountField = raw.amountField;
  }
  for (const control of raw.controls) {
    assert(control.level === "header" || control.level === "context", `${where}: control level is header or context`);
    assert(control.severity === "error" || control.severity === "warning", `${where}: control severity is error or warning`);
    assert(mapping.amountField !== undefined, `${where}: a control needs an amountField to sum`);
    const table = control.level === "header" ? mapping.header : mapping.context;
    assert(table[control.count]?.type === "count", `${where}: control count ${control.count} is a count field`);
    assert(table[control.sum]?.type === "decimal", `${where}: control sum ${control.sum} is a decimal field`);
    mapping.controls.push({ level: control.level, count: control.count, sum: control.sum, severity: control.severity });
  }
  for (const total of raw.totals ?? []) {
    const severity = total.severity;
    assert(severity === "error" || severity === "warning", `${where}: total severity is known`);
    assert(mapping.amountField !== undefined, `${where}: a total needs an amountField to sum`);
    const isAmount = mapping.header[total.total]?.type === "amount";
    assert(isAmount, `${where}: total ${total.total} is an amount field of the header`);
    mapping.totals.push({ total: total.total, severity });
  }
  return mapping;
}

const rawMappings = [pacs008, pacs002, pacs004, camt056, camt053, camt054, pain001, pain002, pain008, pacs028, camt029] as RawMapping[];

/** "pacs.008" -> "08" -> mapping; built and checked once at load, so a broken table stops start-up. */
const mappings = new Map<string, Map<string, MessageMapping>>();
for (const raw of rawMappings) {
  assert(!mappings.has(raw.family), `mapping ${raw.family} is defined once`);
  assert(raw.versions.length > 0 && raw.versions.every((v) => /^\d{2}$/.test(v)), `${raw.family}: versions are two digits`);
  assert(Object.keys(raw.versionOverrides ?? {}).every((v) => raw.versions.includes(v)), `${raw.family}: overrides name mapped versions`);
  mappings.set(raw.family, new Map(raw.versions.map((version) => [version, loadMapping(raw, version)])));
}

/** Root element -> family: a Document without a namespace is identified by its root (each family has its own). */
const familyByRoot = new Map<string, string>();
for (const raw of rawMappings) {
  assert(!familyByRoot.has(raw.messageRoot), `message root ${raw.messageRoot} belongs to one family`);
  familyByRoot.set(raw.messageRoot, raw.family);
}

/** The newest mapped version of the family whose root element this is: what a Document without a namespace is read as. */
export function mappingByRoot(rootElement: string): MessageMapping | undefined {
  const family = familyByRoot.get(rootElement);
  const versions = family === undefined ? undefined : mappings.get(family);
  if (versions === undefined) return undefined;
  const newest = [...versions.keys()].sort().at(-1);
  return newest === undefined ? undefined : versions.get(newest);
}

export function supportedFamilies(): string[] {
  return [...mappings.keys()];
}

export function supportedVersions(family: string): string[] {
  return [...(mappings.get(family)?.keys() ?? [])];
}

export function isFamilySupported(family: string): boolean {
  return mappings.has(family);
}

export function mappingFor(family: string, version: string): MessageMapping | undefined {
  return mappings.get(family)?.get(version);
}

export interface AppHeaderMapping { element: string; versions: string[]; fields: FieldTable }

export const appHeaderMapping: AppHeaderMapping = (() => {
  const raw = head001 as { element: string; versions: string[]; fields: RawTable };
  assert(elementName.test(raw.element), "head.001: element is an element name");
  return { element: raw.element, versions: raw.versions, fields: loadTable(raw.fields, "head.001.fields") };
})();
