import { isUtf8 } from "node:buffer";
import type { ErrorCode } from "../errors/catalog.ts";
import { fail, ok, type Result } from "../errors/finding.ts";

/**
 * JSON text as a body of the HTTP API may carry it, read strictly (docs/decisions/0067).
 * `JSON.parse` (and fastify's secure-json-parse on top of it, which only refuses `__proto__` and
 * `constructor.prototype` members) takes three things a payment gateway must not:
 * - bytes that are not UTF-8: decoding turns them into U+FFFD and the body is stored as text
 *   nobody sent;
 * - a member name twice in one object: the last wins, so `"amount":"1.00","amount":"5000.00"`
 *   is 5,000.00 here and 1.00 to any proxy, gateway or log reader that takes the first;
 * - any depth: every recursive walk of the value afterwards (the storable-text guard, schema
 *   checks) can overflow the stack, answering 500 to a 10 KB body.
 * This reader refuses each with its byte offset, before `JSON.parse` builds the value. One pass
 * over the bytes with an explicit stack: no recursion, whatever the input. Pure: no I/O.
 */
export type JsonTextRefusalCode = Extract<ErrorCode,
  "REQUEST_BODY_UTF8_INVALID" | "REQUEST_BODY_TOO_DEEP" | "REQUEST_BODY_KEY_DUPLICATE" | "REQUEST_INVALID">;

export interface JsonTextRefusal {
  code: JsonTextRefusalCode;
  message: string;
  byteOffset?: number;       // where in the body (bytes, from 0, a byte order mark included)
  path?: string;             // the member, as `items[2].amount`
  firstByteOffset?: number;  // a duplicate member: where its first occurrence is
}

const byteOrderMark = [0xef, 0xbb, 0xbf] as const;
const quote = 0x22;
const backslash = 0x5c;

/**
 * Reads `bytes` as one JSON value: UTF-8, at most `depthMax` levels of objects and arrays, each
 * member name once per object.
 */
export function parseStrictJson(bytes: Buffer, options: { depthMax: number }): Result<unknown, JsonTextRefusal> {
  if (bytes.length === 0) {
    return fail({ code: "REQUEST_INVALID", message: "the body is empty; this route takes a JSON body" });
  }
  if (!isUtf8(bytes)) {
    const offset = firstInvalidUtf8Offset(bytes) ?? 0;
    const shown = (bytes[offset] ?? 0).toString(16).toUpperCase().padStart(2, "0");
    return fail({
      code: "REQUEST_BODY_UTF8_INVALID", byteOffset: offset,
      message: `the body is not UTF-8: byte ${offset} (0x${shown}) does not begin a valid UTF-8 sequence`
        + " (overlong, surrogate, out of range or cut short); nothing was done",
    });
  }
  const start = byteOrderMark.every((b, i) => bytes[i] === b) ? byteOrderMark.length : 0;
  const structure = checkStructure(bytes, start, options.depthMax);
  if (structure !== undefined) return fail(structure);
  try {
    return ok(JSON.parse(bytes.toString("utf8", start)));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return fail({ code: "REQUEST_INVALID", message: `the body is not JSON: ${reason}` });
  }
}

/**
 * The first byte of `bytes` that does not begin a well-formed UTF-8 sequence (RFC 3629: no
 * overlong forms such as C0 80, no surrogates ED A0..BF, nothing past U+10FFFF, no sequence cut
 * short); undefined when every byte does.
 */
export function firstInvalidUtf8Offset(bytes: Uint8Array): number | undefined {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i] as number;
    if (lead < 0x80) {
      i++;
      continue;
    }
    const rule = sequenceRule(lead);
    if (rule === undefined) return i;
    for (let k = 1; k <= rule.continuations; k++) {
      const next = bytes[i + k];
      const [low, high] = k === 1 ? [rule.secondMin, rule.secondMax] : [0x80, 0xbf];
      if (next === undefined || next < low || next > high) return i;
    }
    i += rule.continuations + 1;
  }
  return undefined;
}

/** Continuation bytes a lead byte takes and the range of the first (Unicode table 3-7). */
interface SequenceRule { continuations: number; secondMin: number; secondMax: number }

function sequenceRule(lead: number): SequenceRule | undefined {
  if (lead >= 0xc2 && lead <= 0xdf) return { continuations: 1, secondMin: 0x80, secondMax: 0xbf };
  if (lead === 0xe0) return { continuations: 2, secondMin: 0xa0, secondMax: 0xbf };
  if (lead === 0xed) return { continuations: 2, secondMin: 0x80, secondMax: 0x9f };
  if (lead >= 0xe1 && lead <= 0xef) return { continuations: 2, secondMin: 0x80, secondMax: 0xbf };
  if (lead === 0xf0) return { continuations: 3, secondMin: 0x90, secondMax: 0xbf };
  if (lead >= 0xf1 && lead <= 0xf3) return { continuations: 3, secondMin: 0x80, secondMax: 0xbf };
  if (lead === 0xf4) return { continuations: 3, secondMin: 0x80, secondMax: 0x8f };
  return undefined;
}

type Frame =
  | ObjectFrame
  | { kind: "array"; index: number; name: string | undefined };

/** An open object: its member names so far (byte offset of each), the current member, its own name. */
interface ObjectFrame {
  kind: "object";
  names: Map<string, number>;
  member: string | undefined;
  name: string | undefined;
}

/**
 * Depth and member names of UTF-8 JSON text, in one pass with an explicit stack. Text that is
 * not JSON is left to JSON.parse, which names what is wrong: this pass only stops early.
 */
function checkStructure(bytes: Buffer, start: number, depthMax: number): JsonTextRefusal | undefined {
  const stack: Frame[] = [];
  let expectName = false;
  let i = start;
  while (i < bytes.length) {
    const byte = bytes[i] as number;
    const top = stack[stack.length - 1];
    if (byte === 0x7b || byte === 0x5b) {   // { [
      if (stack.length >= depthMax) {
        return {
          code: "REQUEST_BODY_TOO_DEEP", byteOffset: i, path: pathOf(stack),
          message: `the body nests objects and arrays deeper than ${depthMax} levels (at byte ${i}); nothing was done`,
        };
      }
      const name = top?.kind === "object" ? top.member : undefined;
      stack.push(byte === 0x7b
        ? { kind: "object", names: new Map(), member: undefined, name }
        : { kind: "array", index: 0, name });
      expectName = byte === 0x7b;
      i++;
    } else if (byte === 0x7d || byte === 0x5d) {   // } ]
      stack.pop();
      expectName = false;
      i++;
    } else if (byte === 0x2c) {   // ,
      if (top?.kind === "array") top.index++;
      expectName = top?.kind === "object";
      i++;
    } else if (byte === quote) {
      const end = closingQuote(bytes, i);
      if (end === undefined) return undefined;
      if (expectName && top?.kind === "object") {
        const refusal = takeMemberName(bytes, i, end, top, stack);
        if (refusal !== undefined) return refusal;
      }
      expectName = false;
      i = end + 1;
    } else {
      i++;
    }
  }
  return undefined;
}

/** The index of the quote closing the string that opens at `open`; undefined when none does. */
function closingQuote(bytes: Buffer, open: number): number | undefined {
  let at = bytes.indexOf(quote, open + 1);
  while (at !== -1) {
    let backslashes = 0;
    while (bytes[at - 1 - backslashes] === backslash) backslashes++;
    if (backslashes % 2 === 0) return at;
    at = bytes.indexOf(quote, at + 1);
  }
  return undefined;
}

/**
 * Records a member name of `object` (the string from byte `open` to `close`); refuses it when the
 * object has it already, or when it could poison a prototype.
 */
function takeMemberName(
  bytes: Buffer, open: number, close: number, object: ObjectFrame, stack: readonly Frame[],
): JsonTextRefusal | undefined {
  let name: string;
  try {
    // Decoded, so "\u0061mount" is amount.
    name = JSON.parse(bytes.toString("utf8", open, close + 1)) as string;
  } catch {
    return undefined;   // not a JSON string: JSON.parse says so afterwards
  }
  object.member = name;
  const path = pathOf(stack);
  if (name === "__proto__" || (name === "prototype" && object.name === "constructor")) {
    return {
      code: "REQUEST_INVALID", byteOffset: open, path,
      message: `the member ${path} (at byte ${open}) could replace an object's prototype and is refused`,
    };
  }
  const first = object.names.get(name);
  if (first !== undefined) {
    return {
      code: "REQUEST_BODY_KEY_DUPLICATE", byteOffset: open, firstByteOffset: first, path,
      message: `the member ${path} appears twice in one object (at byte ${first} and again at byte`
        + ` ${open}); readers disagree on which one counts, so nothing was done`,
    };
  }
  object.names.set(name, open);
  return undefined;
}

/** `items[2].amount`: member names and array indexes from the top of the body to the innermost member. */
function pathOf(stack: readonly Frame[]): string {
  let path = "";
  for (const frame of stack) {
    if (frame.kind === "array") path += `[${frame.index}]`;
    else if (frame.member !== undefined) path += path === "" ? frame.member : `.${frame.member}`;
  }
  return path;
}
