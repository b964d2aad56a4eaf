import type { ErrorCode } from "../../errors/catalog.ts";
import { finding, type Finding } from "../../errors/finding.ts";

/** An ISO 8583 finding: its position is the field path and the byte offset in the message or stream. */
export function iso8583Error(
  code: ErrorCode & `ISO8583_${string}`,
  message: string,
  fieldPath: readonly string[] | undefined,
  byteOffset: number,
  valueMasked?: string,
): Finding {
  const position = fieldPath === undefined ? { byteOffset } : { fieldPath: [...fieldPath], byteOffset };
  return finding(code, message, position, valueMasked === undefined ? {} : { valueMasked });
}
