import type { ErrorCode } from "./catalog.ts";
import type { Position } from "./position.ts";

export type Severity = "error" | "warning";

/**
 * Bad input is a value, never an exception: a stable code from the catalog, where it is, and
 * the offending value masked (never card data in clear).
 */
export interface Finding {
  code: ErrorCode;
  severity: Severity;
  message: string;
  position: Position;
  valueMasked?: string;
}

export type Result<T, E = Finding> = { ok: true; value: T } | { ok: false; error: E };

export function ok<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

export function fail<E = Finding>(error: E): { ok: false; error: E } {
  return { ok: false, error };
}

export function finding(
  code: ErrorCode,
  message: string,
  position: Position,
  extra: { severity?: Severity; valueMasked?: string } = {},
): Finding {
  const result: Finding = { code, severity: extra.severity ?? "error", message, position };
  if (extra.valueMasked !== undefined) result.valueMasked = extra.valueMasked;
  return result;
}

/**
 * Readers collect findings up to a bound and then stop collecting (but keep counting), so a
 * hostile file cannot turn its errors into unbounded memory.
 */
export class FindingCollector {
  readonly findings: Finding[] = [];
  errorCount = 0;
  warningCount = 0;
  dropped = 0;
  constructor(readonly findingsMax: number) {}

  add(f: Finding): void {
    if (f.severity === "error") this.errorCount++;
    else this.warningCount++;
    if (this.findings.length < this.findingsMax) this.findings.push(f);
    else this.dropped++;
  }

  get hasErrors(): boolean {
    return this.errorCount > 0;
  }
}

/** A finding as JSON shows it to a machine (docs/decisions/0107): snake_case, position included. */
export function findingView(f: Finding): Record<string, unknown> {
  const p = f.position;
  const position = {
    file: p.file, line: p.line, column: p.column, record_type: p.recordType, field: p.field,
    xml_path: p.xmlPath, field_path: p.fieldPath, byte_offset: p.byteOffset,
    transaction_index: p.transactionIndex,
  };
  return {
    code: f.code, severity: f.severity, message: f.message,
    position: Object.fromEntries(Object.entries(position).filter(([, v]) => v !== undefined)),
    ...(f.valueMasked === undefined ? {} : { value_masked: f.valueMasked }),
  };
}
