import { decimalToMinor } from "../iso4217/currency.ts";
import type { ErrorCode } from "../../errors/catalog.ts";
import type { Iso20022FieldSpec, FieldTable } from "./mapping.ts";
import type { FieldValues, FindingScope, Iso20022Finding } from "./types.ts";
import { resolvePath, type Resolved, type XmlNode } from "./xml-node.ts";

const uetrPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const bicPattern = /^[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}(?:[A-Z0-9]{3})?$/;
const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/;
const dateTimePattern = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)?$/;
const countPattern = /^\d{1,15}$/;                   // Max15NumericText
const decimalPattern = /^\d{1,18}(?:\.\d{1,17})?$/;  // DecimalNumber: 18 digits, 17 after the point
const maskedCharsMax = 48;

export interface Where {
  scope: FindingScope;
  transactionIndex?: number;
}

function mask(value: string): string {
  return value.length > maskedCharsMax ? `${value.slice(0, maskedCharsMax)}...` : value;
}

function issue(code: ErrorCode, message: string, xmlPath: string, where: Where, value?: string, severity: "error" | "warning" = "error"): Iso20022Finding {
  const found: Iso20022Finding = { code, severity, message, position: { xmlPath }, scope: where.scope };
  if (where.transactionIndex !== undefined) found.position.transactionIndex = where.transactionIndex;
  if (value !== undefined) found.valueMasked = mask(value);
  return found;
}

const daysInMonth = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function validDate(year: string, month: string, day: string): boolean {
  const y = Number(year);
  const m = Number(month);
  const d = Number(day);
  if (m < 1 || m > 12 || d < 1) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  return d <= (m === 2 && leap ? 29 : daysInMonth[m - 1] ?? 0);
}

function checkDate(value: string, withTime: "no" | "yes" | "either"): boolean {
  const date = withTime !== "yes" ? datePattern.exec(value) : null;
  if (date) return validDate(date[1] ?? "", date[2] ?? "", date[3] ?? "");
  const dateTime = withTime !== "no" ? dateTimePattern.exec(value) : null;
  return dateTime !== null && validDate(dateTime[1] ?? "", dateTime[2] ?? "", dateTime[3] ?? "");
}

function characterCount(value: string): number {
  return Array.from(value).length;
}

function checkValue(
  name: string, spec: Iso20022FieldSpec, value: string, xmlPath: string, element: XmlNode,
  where: Where, out: FieldValues, findings: Iso20022Finding[],
): void {
  if (spec.maxLength !== undefined && value.length > spec.maxLength && characterCount(value) > spec.maxLength) {
    findings.push(issue("ISO20022_FIELD_TOO_LONG", `${name} is ${characterCount(value)} characters, at most ${spec.maxLength} allowed`, xmlPath, where, value));
  }
  switch (spec.type) {
    case "text":
      return;
    case "uetr":
      if (!uetrPattern.test(value)) findings.push(issue("ISO20022_UETR_INVALID", `${name} is not a lowercase UUID v4`, xmlPath, where, value));
      return;
    case "bic":
      if (!bicPattern.test(value)) findings.push(issue("ISO20022_BIC_INVALID", `${name} is not a BIC`, xmlPath, where, value));
      return;
    case "date":
    case "dateTime":
    case "dateOrDateTime": {
      const withTime = spec.type === "date" ? "no" : spec.type === "dateTime" ? "yes" : "either";
      if (!checkDate(value, withTime)) findings.push(issue("ISO20022_FIELD_INVALID", `${name} is not an ISO ${spec.type === "date" ? "date" : "date-time"}`, xmlPath, where, value));
      return;
    }
    case "count":
      if (!countPattern.test(value)) findings.push(issue("ISO20022_FIELD_INVALID", `${name} is not a count of at most 15 digits`, xmlPath, where, value));
      return;
    case "decimal":
      if (!decimalPattern.test(value)) findings.push(issue("ISO20022_FIELD_INVALID", `${name} is not a plain decimal number`, xmlPath, where, value));
      return;
    case "amount": {
      const currency = element.attributes?.["Ccy"];
      if (currency === undefined || currency === "") {
        findings.push(issue("ISO20022_FIELD_MISSING", `${name} has no Ccy attribute`, `${xmlPath}/@Ccy`, where));
        return;
      }
      out.values[`${name}@Ccy`] = currency;
      out.xmlPaths[`${name}@Ccy`] = `${xmlPath}/@Ccy`;
      const minor = decimalToMinor(value, currency, { xmlPath });
      if (!minor.ok) {
        const failed = minor.error;
        const found: Iso20022Finding = { ...failed, position: { ...failed.position, xmlPath: failed.code === "CURRENCY_UNKNOWN" ? `${xmlPath}/@Ccy` : xmlPath }, scope: where.scope, valueMasked: mask(failed.code === "CURRENCY_UNKNOWN" ? currency : value) };
        if (where.transactionIndex !== undefined) found.position.transactionIndex = where.transactionIndex;
        findings.push(found);
      }
      return;
    }
  }
}

/**
 * Resolves a mapping table against one block and checks each value against its ISO 20022 type.
 * Values stay strings exactly as written (leading zeros kept); a bad value is a finding, and the
 * value is still reported so an operator sees what arrived.
 */
export function extractFields(node: XmlNode, table: FieldTable, basePath: string, where: Where): { fields: FieldValues; findings: Iso20022Finding[] } {
  const fields: FieldValues = { values: {}, xmlPaths: {} };
  const findings: Iso20022Finding[] = [];
  for (const [name, spec] of Object.entries(table)) {
    if (spec.repeats !== undefined) {
      extractRepeated(node, name, spec, basePath, where, fields, findings);
      continue;
    }
    let resolved: Resolved | undefined;
    for (const path of spec.paths) {
      resolved = resolvePath(node, path);
      if (resolved !== undefined && resolved.value !== "") break;
      resolved = undefined;
    }
    if (resolved === undefined) {
      if (spec.required) findings.push(issue("ISO20022_FIELD_MISSING", `${name} is mandatory`, `${basePath}/${spec.paths[0] ?? ""}`, where));
      continue;
    }
    const xmlPath = `${basePath}/${resolved.path}`;
    fields.values[name] = resolved.value;
    fields.xmlPaths[name] = xmlPath;
    checkValue(name, spec, resolved.value, xmlPath, resolved.node, where, fields, findings);
  }
  return { fields, findings };
}

/**
 * A field below a repeated element (ChrgsInf/Amt): the first occurrence as `<name>`, the n-th as
 * `<name>.<n>`, each checked as its type says; more occurrences than the mapping reads is an
 * error at the first one past it.
 */
function extractRepeated(
  node: XmlNode, name: string, spec: Iso20022FieldSpec, basePath: string, where: Where,
  fields: FieldValues, findings: Iso20022Finding[],
): void {
  const [element, ...rest] = (spec.paths[0] ?? "").split("/");
  const occurrences = (node.children ?? []).filter((child) => child.name === element);
  const repeatsMax = spec.repeats ?? 1;
  occurrences.slice(0, repeatsMax).forEach((occurrence, i) => {
    const resolved = resolvePath(occurrence, rest.join("/"));
    if (resolved === undefined || resolved.value === "") return;
    const key = i === 0 ? name : `${name}.${i + 1}`;
    const xmlPath = `${basePath}/${element}[${i + 1}]/${resolved.path}`;
    fields.values[key] = resolved.value;
    fields.xmlPaths[key] = xmlPath;
    checkValue(key, spec, resolved.value, xmlPath, resolved.node, where, fields, findings);
  });
  if (occurrences.length > repeatsMax) {
    findings.push(issue("ISO20022_FIELD_INVALID",
      `${element} occurs ${occurrences.length} times, at most ${repeatsMax} are read`,
      `${basePath}/${element}[${repeatsMax + 1}]`, where));
  }
}

export function fileFinding(code: ErrorCode, message: string, position: Iso20022Finding["position"], severity: "error" | "warning" = "error", valueMasked?: string): Iso20022Finding {
  const found: Iso20022Finding = { code, severity, message, position, scope: "file" };
  if (valueMasked !== undefined) found.valueMasked = mask(valueMasked);
  return found;
}
