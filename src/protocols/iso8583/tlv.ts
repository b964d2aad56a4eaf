import type { TlvElement } from "./types.ts";

/**
 * BER-TLV as EMV uses it in DE 55: a flat sequence of tag-length-value elements. Strict on
 * purpose: lengths must be in their shortest form and no padding bytes may sit between
 * elements, so that what we read repacks to the same bytes.
 */

export interface TlvProblem {
  offset: number;       // byte offset within the TLV data
  reason: string;
  tag?: string;
  tooMany?: boolean;
}

const tagBytesMax = 3;   // EMV tags are one or two bytes; BER allows longer, nobody sends them
const lengthBytesMax = 2; // 0x82 + two bytes already exceeds any ISO 8583 field

function hexOf(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString("hex").toUpperCase();
}

export function parseTlv(bytes: Uint8Array, start: number, end: number, elementsMax: number): TlvElement[] | TlvProblem {
  const elements: TlvElement[] = [];
  let offset = start;
  while (offset < end) {
    const elementOffset = offset - start;
    if (elements.length === elementsMax) return { offset: elementOffset, reason: `more than ${elementsMax} elements`, tooMany: true };
    const first = bytes[offset] as number;
    if (first === 0x00 || first === 0xff) return { offset: elementOffset, reason: "padding byte where a tag must start" };
    let tagEnd = offset + 1;
    if ((first & 0x1f) === 0x1f) {
      // Subsequent tag bytes carry a continuation flag in bit 8.
      for (;;) {
        if (tagEnd >= end) return { offset: elementOffset, reason: "tag runs past the end of the data" };
        const next = bytes[tagEnd++] as number;
        if ((next & 0x80) === 0) break;
        if (tagEnd - offset >= tagBytesMax) return { offset: elementOffset, reason: `tag longer than ${tagBytesMax} bytes` };
      }
    }
    const tag = hexOf(bytes, offset, tagEnd);
    if (tagEnd >= end) return { offset: elementOffset, reason: "length missing", tag };
    const lengthByte = bytes[tagEnd] as number;
    let valueStart = tagEnd + 1;
    let valueLength = lengthByte;
    if (lengthByte >= 0x80) {
      const lengthBytes = lengthByte & 0x7f;
      if (lengthBytes === 0 || lengthBytes > lengthBytesMax) return { offset: tagEnd - start, reason: "indefinite or oversized length", tag };
      if (valueStart + lengthBytes > end) return { offset: tagEnd - start, reason: "length runs past the end of the data", tag };
      valueLength = 0;
      for (let i = 0; i < lengthBytes; i++) valueLength = valueLength * 256 + (bytes[valueStart + i] as number);
      const shortestBytes = valueLength < 0x80 ? 0 : valueLength < 0x100 ? 1 : 2;
      if (shortestBytes !== lengthBytes) return { offset: tagEnd - start, reason: "length not in its shortest form", tag };
      valueStart += lengthBytes;
    }
    const valueEnd = valueStart + valueLength;
    if (valueEnd > end) return { offset: tagEnd - start, reason: "value runs past the end of the data", tag };
    elements.push({ tag, value: hexOf(bytes, valueStart, valueEnd) });
    offset = valueEnd;
  }
  return elements;
}

const hexPattern = /^(?:[0-9A-Fa-f]{2})+$/;

function tagIsWellFormed(tag: Buffer): boolean {
  const first = tag[0];
  if (first === undefined || first === 0x00 || first === 0xff) return false;
  if ((first & 0x1f) !== 0x1f) return tag.length === 1;
  if (tag.length < 2 || tag.length > tagBytesMax) return false;
  for (let i = 1; i < tag.length; i++) {
    const isLast = i === tag.length - 1;
    if ((((tag[i] as number) & 0x80) === 0) !== isLast) return false;
  }
  return true;
}

/** Elements -> uppercase hex of their BER-TLV bytes, or the index and reason of the first bad element. */
export function buildTlv(elements: readonly TlvElement[], elementsMax: number): string | TlvProblem {
  if (elements.length > elementsMax) return { offset: 0, reason: `more than ${elementsMax} elements`, tooMany: true };
  let hex = "";
  for (const [index, element] of elements.entries()) {
    if (typeof element !== "object" || element === null || typeof element.tag !== "string" || typeof element.value !== "string") {
      return { offset: index, reason: "an element must be { tag, value } with hex strings" };
    }
    if (!hexPattern.test(element.tag) || !tagIsWellFormed(Buffer.from(element.tag, "hex"))) {
      return { offset: index, reason: "malformed tag", tag: element.tag.slice(0, 8) };
    }
    if (element.value !== "" && !hexPattern.test(element.value)) return { offset: index, reason: "value is not hex", tag: element.tag };
    const valueLength = element.value.length / 2;
    if (valueLength > 0xffff) return { offset: index, reason: "value too long", tag: element.tag };
    const lengthHex = valueLength < 0x80 ? hex2(valueLength)
      : valueLength < 0x100 ? `81${hex2(valueLength)}` : `82${hex2(valueLength >> 8)}${hex2(valueLength & 0xff)}`;
    hex += element.tag.toUpperCase() + lengthHex + element.value.toUpperCase();
  }
  return hex;
}

function hex2(byte: number): string {
  return byte.toString(16).toUpperCase().padStart(2, "0");
}
