import table from "../../../protocols/iso8583/cp037.json" with { type: "json" };
import { assert } from "../../assert.ts";

/**
 * EBCDIC code page 037, read from protocols/iso8583/cp037.json (byte -> code point). Checked to be
 * a bijection onto U+0000..U+00FF, so every byte decodes and every Latin-1 character encodes.
 */
const byteToChar: string[] = [];
const charToByte = new Int16Array(256).fill(-1);

assert(table.codePoints.length === 256, "cp037 table has one code point per byte");
table.codePoints.forEach((codePoint, byte) => {
  assert(Number.isInteger(codePoint) && codePoint >= 0 && codePoint <= 0xff, `cp037 byte ${byte} maps into Latin-1`);
  assert(charToByte[codePoint] === -1, `cp037 maps code point ${codePoint} from one byte only`);
  charToByte[codePoint] = byte;
  byteToChar.push(String.fromCharCode(codePoint));
});

export function decodeEbcdic(bytes: Uint8Array, start: number, end: number): string {
  let text = "";
  for (let i = start; i < end; i++) text += byteToChar[bytes[i] as number];
  return text;
}

/** The EBCDIC byte of a character, or -1 when cp037 cannot encode it. */
export function ebcdicByteOf(char: number): number {
  return char < 256 ? (charToByte[char] as number) : -1;
}
