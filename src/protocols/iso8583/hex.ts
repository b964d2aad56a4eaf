import { fail, ok, type Finding, type Result } from "../../errors/finding.ts";
import { iso8583Error } from "./errors.ts";

/** Hex text as engineers paste it from traces: whitespace, colons and a 0x prefix are ignored. */
export function bytesFromHex(text: string): Result<Buffer, Finding> {
  const compact = text.replace(/^0x/i, "").replace(/[\s:]/g, "");
  if (compact.length % 2 !== 0 || !/^[0-9A-Fa-f]*$/.test(compact)) {
    return fail(iso8583Error("ISO8583_HEX_INVALID", "input is not an even number of hexadecimal digits", undefined, 0));
  }
  return ok(Buffer.from(compact, "hex"));
}

export function hexFromBytes(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex").toUpperCase();
}
