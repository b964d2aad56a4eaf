import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { limits } from "../../config/limits.ts";
import { fail, ok, type Finding, type Result } from "../../errors/finding.ts";
import {
  bytesFromHex, createDeframer, dictionaryByName, frameMessage, hexFromBytes, isFraming, maskMessage, messageFromJson,
  pack, parseDictionary, shippedDictionaries, unpack, unpackTolerant, type Dictionary, type Framing,
} from "../../protocols/iso8583/index.ts";
import { iso8583Error } from "../../protocols/iso8583/errors.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { printJson, printLine } from "../output.ts";

/**
 * `clearline iso8583 decode|encode|dictionaries`: what an engineer reaches for when reading a
 * scheme trace. Decoded card data is always masked; encoding prints what it was given, since the
 * caller already holds it. Decoding is tolerant by default (a field that breaks its rule is shown
 * raw with a finding, and the rest still decodes); --strict applies the endpoint's rules.
 */

export interface Iso8583ToolOptions {
  dictionary?: string; // a shipped dictionary name (see `dictionaries`) or a path to a dictionary JSON file
  framing?: string;    // none, binary-2, ascii-4, bcd-2, vml-4
  strict?: boolean;    // decode only: the endpoint's rules, the first broken field refuses the message
}

/** One line per shipped dictionary: its name, then what it lays out. */
export function dictionariesTool(): string {
  return [...shippedDictionaries.values()].map((dictionary) => `${dictionary.name}\t${dictionary.title}`).join("\n");
}

function resolveDictionary(nameOrPath: string | undefined): Result<Dictionary, Finding> {
  const shipped = dictionaryByName(nameOrPath ?? "iso87-ascii");
  if (shipped !== undefined) return ok(shipped);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(nameOrPath ?? "", "utf8"));
  } catch {
    return fail(iso8583Error("ISO8583_DICTIONARY_INVALID", `no shipped dictionary named ${nameOrPath}, and no readable JSON file at that path`, undefined, 0));
  }
  return parseDictionary(raw);
}

function resolveFraming(name: string | undefined): Result<Framing | "none", Finding> {
  const framing = name ?? "none";
  if (framing === "none" || isFraming(framing)) return ok(framing);
  return fail(iso8583Error("ISO8583_FRAME_HEADER_INVALID", `unknown framing ${framing} (none, binary-2, ascii-4, bcd-2, vml-4)`, undefined, 0));
}

/** Hex in (one message, or a framed stream) -> masked JSON text, one message after another. */
export function decodeTool(hexText: string, options: Iso8583ToolOptions = {}): Result<string, Finding> {
  const decoded = decodeMessages(hexText, options);
  return decoded.ok ? ok(decoded.value.map((message) => JSON.stringify(message, null, 2)).join("\n")) : decoded;
}

/** Hex in -> the masked messages. */
export function decodeMessages(hexText: string, options: Iso8583ToolOptions = {}): Result<object[], Finding> {
  const dictionary = resolveDictionary(options.dictionary);
  if (!dictionary.ok) return dictionary;
  const framing = resolveFraming(options.framing);
  if (!framing.ok) return framing;
  const bytes = bytesFromHex(hexText);
  if (!bytes.ok) return bytes;
  let bodies: Buffer[] = [bytes.value];
  if (framing.value !== "none") {
    const deframer = createDeframer(framing.value);
    const result = deframer.push(bytes.value);
    if (result.error !== undefined) return fail(result.error);
    const finished = deframer.finish();
    if (!finished.ok) return finished;
    bodies = result.frames;
  }
  const decoded: object[] = [];
  for (const body of bodies) {
    const message = decodeOne(body, dictionary.value, options.strict === true);
    if (!message.ok) return message;
    decoded.push(message.value);
  }
  return ok(decoded);
}

/** A masked message; when read tolerantly and some fields broke their rules, their raw hex and the findings too. */
function decodeOne(body: Buffer, dictionary: Dictionary, strict: boolean): Result<object, Finding> {
  if (strict) {
    const message = unpack(body, dictionary);
    return message.ok ? ok(maskMessage(message.value, dictionary)) : message;
  }
  const read = unpackTolerant(body, dictionary);
  if (!read.ok) return read;
  const masked = maskMessage(read.value.message, dictionary);
  if (read.value.findings.length === 0) return ok(masked);
  return ok({ ...masked, rawFields: read.value.rawFields, findings: read.value.findings });
}

/** JSON in ({ mti, fields }) -> hex of the packed message, with its frame header when asked. */
export function encodeTool(jsonText: string, options: Iso8583ToolOptions = {}): Result<string, Finding> {
  const dictionary = resolveDictionary(options.dictionary);
  if (!dictionary.ok) return dictionary;
  const framing = resolveFraming(options.framing);
  if (!framing.ok) return framing;
  let json: unknown;
  try {
    json = JSON.parse(jsonText);
  } catch {
    return fail(iso8583Error("ISO8583_JSON_INVALID", "input is not JSON", undefined, 0));
  }
  const message = messageFromJson(json);
  if (!message.ok) return message;
  const packed = pack(message.value, dictionary.value);
  if (!packed.ok) return packed;
  if (framing.value === "none") return ok(hexFromBytes(packed.value));
  const framed = frameMessage(packed.value, framing.value);
  return framed.ok ? ok(hexFromBytes(framed.value)) : framed;
}

async function readInput(argument: string | undefined): Promise<string> {
  const bytesMax = limits.iso8583.cliInputBytesMax;
  if (argument !== undefined && argument !== "-") {
    if (argument.length > bytesMax) throw new CliError(`input exceeds ${bytesMax} bytes`, exitCodes.usage);
    return argument;
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of process.stdin) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    total += buffer.length;
    if (total > bytesMax) throw new CliError(`input exceeds ${bytesMax} bytes`, exitCodes.usage);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function finish<T>(result: Result<T, Finding>, print: (value: T) => void): void {
  if (result.ok) {
    print(result.value);
    return;
  }
  const { code, message, position, valueMasked } = result.error;
  const where = JSON.stringify(position);
  throw new CliError(`${code}: ${message} at ${where}${valueMasked === undefined ? "" : ` (value ${valueMasked})`}`, exitCodes.usage);
}

export function registerIso8583Command(program: Command): void {
  const iso8583 = program.command("iso8583").description("read and write ISO 8583 messages, e.g. from a scheme trace");
  iso8583
    .command("decode")
    .description("print a message's MTI and fields as JSON, card data masked; fields that break their rules shown raw with findings")
    .argument("[hex]", "the message in hex, or - (or nothing) to read stdin")
    .option("--dictionary <name>", "a name from `clearline iso8583 dictionaries`, or a path to a dictionary JSON file", "iso87-ascii")
    .option("--framing <framing>", "none, binary-2, ascii-4, bcd-2 or vml-4 (the hex then holds framed messages)", "none")
    .option("--strict", "the endpoint's rules: the first field that breaks its rule refuses the message")
    .option("--json", "one JSON array of the messages (without it: each message as indented JSON)")
    .action(async (hex: string | undefined, options: Iso8583ToolOptions & { json?: boolean }) => {
      const input = await readInput(hex);
      if (options.json) finish(decodeMessages(input, options), (messages) => printJson(messages));
      else finish(decodeTool(input, options), printLine);
    });
  iso8583
    .command("encode")
    .description("pack a JSON message { mti, fields } and print its hex")
    .argument("[json]", "the message as JSON, or - (or nothing) to read stdin")
    .option("--dictionary <name>", "a name from `clearline iso8583 dictionaries`, or a path to a dictionary JSON file", "iso87-ascii")
    .option("--framing <framing>", "none, binary-2, ascii-4, bcd-2 or vml-4 (prefix the frame header)", "none")
    .option("--json", "print { \"hex\": ... } instead of the bare hex")
    .action(async (json: string | undefined, options: Iso8583ToolOptions & { json?: boolean }) => {
      finish(encodeTool(await readInput(json), options), (hex) => (options.json ? printJson({ hex }) : printLine(hex)));
    });
  iso8583
    .command("dictionaries")
    .description("list the shipped field dictionaries by name")
    .option("--json", "machine-readable output")
    .action((options: { json?: boolean }) => {
      if (options.json) printJson([...shippedDictionaries.values()].map((dictionary) => ({ name: dictionary.name, title: dictionary.title })));
      else printLine(dictionariesTool());
    });
}
