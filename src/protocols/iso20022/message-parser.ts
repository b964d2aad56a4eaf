import { XMLParser, XMLValidator } from "fast-xml-parser";
import { InvariantError } from "../../assert.ts";
import { limits as allLimits } from "../../config/limits.ts";
import { DocumentWalker } from "./document-walker.ts";

import { InputGuard } from "./input-guard.ts";
import { readerLimits, type ReadOptions } from "./reader.ts";
import type { Iso20022Event } from "./types.ts";

type OrderedNode = Record<string, unknown> & { ":@"?: Record<string, string> };

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  parseTagValue: false,        // "00123" stays "00123"
  parseAttributeValue: false,
  trimValues: false,
  processEntities: true,
  htmlEntities: true,          // also decodes numeric character references (&#65;), which XML requires
  ignoreDeclaration: false,
  ignorePiTags: true,
  commentPropName: "#comment",
});

/**
 * A single small message (a status report, one payment) parsed whole by fast-xml-parser and
 * replayed through the same DocumentWalker as the streaming reader, so both give the same events.
 * Files go through `readIso20022`: a whole-document tree costs many times the file in memory.
 */
export function parseIso20022Message(bytes: Uint8Array, options: ReadOptions = {}): Iso20022Event[] {
  const chosen = readerLimits(options.limits);
  const events: Iso20022Event[] = [];
  const walker = new DocumentWalker(chosen, (event) => events.push(event));
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const messageBytesMax = Math.min(allLimits.iso20022.messageBytesMax, chosen.fileBytesMax);
  const finish = (): Iso20022Event[] => {
    walker.end();
    return events;
  };
  if (buffer.length === 0) {
    walker.fatal("INPUT_EMPTY", "the message is empty");
    return finish();
  }
  if (buffer.length > messageBytesMax) {
    walker.fatal("INPUT_TOO_LARGE", `a single message is at most ${messageBytesMax} bytes; read files with the streaming reader`, { byteOffset: messageBytesMax });
    return finish();
  }
  const refused = new InputGuard({ fileBytesMax: messageBytesMax, elementTextBytesMax: chosen.elementTextBytesMax }).check(buffer);
  if (refused) {
    walker.fatal(refused.code, refused.message, refused.position);
    return finish();
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(buffer);
  } catch {
    walker.fatal("ISO20022_ENCODING_UNSUPPORTED", "the bytes are not valid UTF-8");
    return finish();
  }
  // fast-xml-parser would decode HTML names (&nbsp;) that XML does not define; saxes refuses them.
  const undefinedEntity = /&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.exec(text);
  if (undefinedEntity) {
    walker.fatal("ISO20022_XML_MALFORMED", "undefined entity", { byteOffset: Buffer.byteLength(text.slice(0, undefinedEntity.index)) });
    return finish();
  }
  // fast-xml-parser silently drops a reference to a code point XML does not allow (&#0;, &#xD800;):
  // the value would change without a word. saxes refuses them; so does this path.
  const badReference = disallowedCharacterReference(text);
  if (badReference) {
    walker.fatal("TEXT_CHARACTER_INVALID", `the character reference ${badReference.reference} names no XML character (NUL, a surrogate or another code point XML forbids)`, { byteOffset: Buffer.byteLength(text.slice(0, badReference.index)) });
    return finish();
  }
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    walker.fatal("ISO20022_XML_MALFORMED", valid.err.msg, { line: valid.err.line, column: valid.err.col });
    return finish();
  }
  let tree: OrderedNode[];
  try {
    tree = parser.parse(text) as OrderedNode[];
  } catch (error) {
    if (error instanceof InvariantError) throw error;
    walker.fatal("ISO20022_XML_MALFORMED", error instanceof Error ? error.message : String(error));
    return finish();
  }
  replay(tree, walker);
  return finish();
}

/** XML 1.0 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]. */
function isXmlCharacter(codePoint: number): boolean {
  return codePoint === 0x9 || codePoint === 0xa || codePoint === 0xd || (codePoint >= 0x20 && codePoint <= 0xd7ff)
    || (codePoint >= 0xe000 && codePoint <= 0xfffd) || (codePoint >= 0x10000 && codePoint <= 0x10ffff);
}

function disallowedCharacterReference(text: string): { reference: string; index: number } | undefined {
  for (const match of text.matchAll(/&#(?:x([0-9a-fA-F]{1,8})|(\d{1,10}));/g)) {
    const codePoint = match[1] !== undefined ? Number.parseInt(match[1], 16) : Number(match[2]);
    if (!isXmlCharacter(codePoint)) return { reference: match[0], index: match.index };
  }
  return undefined;
}

function replay(nodes: OrderedNode[], walker: DocumentWalker): void {
  for (const node of nodes) {
    if (walker.stopped) return;
    for (const [name, value] of Object.entries(node)) {
      if (name === ":@" || name === "#comment") continue;
      if (name === "#text") {
        walker.text(String(value));
        continue;
      }
      if (name === "?xml") {
        const encoding = node[":@"]?.["encoding"];
        if (encoding !== undefined && !/^utf-?8$/i.test(encoding)) walker.fatal("ISO20022_ENCODING_UNSUPPORTED", `encoding ${encoding} is not UTF-8`, {}, encoding);
        continue;
      }
      walker.open(name, node[":@"] ?? {});
      replay(value as OrderedNode[], walker);
      if (walker.stopped) return;
      walker.close();
    }
  }
}

