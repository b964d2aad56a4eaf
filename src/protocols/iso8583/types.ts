/**
 * The shapes of the ISO 8583 codec: field dictionaries (loaded from protocols/iso8583/*.json)
 * and messages. A message is plain data (JSON-ready): the MTI and the present fields by number.
 */

// Field types of the standard: n numeric, a alpha, an/ans alphanumeric (+ special), ns, as,
// z track data, b binary (bytes), x+n amount with a C(redit)/D(ebit) sign.
export type FieldType = "n" | "a" | "an" | "ans" | "ns" | "as" | "z" | "b" | "x+n";
export type FieldPrefix = "fixed" | "L" | "LL" | "LLL" | "LLLL";
export type PrefixEncoding = "ascii" | "ebcdic" | "bcd" | "binary";
// bcd: packed digits, aligned and padded as the field's `bcd` says (default right aligned, an odd
// length getting a leading pad nibble 0); bcd-left: the same, left aligned by default (a trailing
// pad nibble); sign-bcd: one ASCII sign byte then BCD digits; ascii-hex: bytes as hex characters.
export type FieldEncoding = "ascii" | "ebcdic" | "bcd" | "bcd-left" | "binary" | "ascii-hex" | "sign-bcd";
export type MtiEncoding = "ascii" | "ebcdic" | "bcd";
export type BitmapEncoding = "hex" | "binary";
// How a value is masked for logs and errors: a PAN keeps BIN + last four, track data keeps the
// masked PAN only, a secret (PIN block, EMV data) keeps nothing but its shape.
export type Sensitivity = "pan" | "track" | "secret";

export interface PositionalSubfield {
  name: string;
  length: number;
}

export type Composite =
  | { kind: "positional"; subfields: readonly PositionalSubfield[] }
  | { kind: "tlv" };

/**
 * Where an odd number of BCD digits leaves its spare nibble, and what the nibble holds. Packagers
 * differ: jPOS's IFB_LLNUM left-aligns the digits and pads the last nibble with 0, others pad in
 * front, or with F. "right" = digits right aligned (pad nibble first); "left" = pad nibble last.
 */
export interface BcdLayout {
  align: "left" | "right";
  padNibble: number; // 0x0 or 0xF
}

export interface FieldDefinition {
  number: number;
  name: string;                    // camelCase standard name, e.g. systemTraceAuditNumber
  title: string;                   // the standard's wording, for people
  type: FieldType;
  length: number;                  // exact (fixed) or maximum (variable): characters, digits, or bytes for b
  prefix: FieldPrefix;
  prefixEncoding: PrefixEncoding | undefined; // undefined exactly when prefix is "fixed"
  encoding: FieldEncoding;
  padding: string;                 // pad character for short fixed values ("0", " ", or nibble "0"/"F" for bcd-left)
  bcd: BcdLayout | undefined;      // set exactly when the encoding is bcd, bcd-left or sign-bcd
  sensitive: Sensitivity | undefined;
  composite: Composite | undefined;
}

export interface Dictionary {
  name: string;
  title: string;
  mti: { encoding: MtiEncoding };
  bitmap: { encoding: BitmapEncoding; bitmapsMax: number };
  // Indexed by field number (0..192); undefined where the dictionary defines no field.
  fields: readonly (FieldDefinition | undefined)[];
  fieldNumberByName: ReadonlyMap<string, number>;
}

/** One BER-TLV element: tag and value as uppercase hex (e.g. { tag: "9F02", value: "000000001000" }). */
export interface TlvElement {
  tag: string;
  value: string;
}

/** Subfields of a positional composite field (DE 90), by name, in dictionary order. */
export type Subfields = Readonly<Record<string, string>>;

/**
 * A field's value: text for character fields (kept exactly as on the wire, padding included),
 * uppercase hex for b fields, subfields for positional composites, elements for TLV composites.
 * Packing also accepts plain text (raw hex for TLV) for a composite field.
 */
export type FieldValue = string | Subfields | readonly TlvElement[];

export interface Message {
  mti: string;                                 // four digits, e.g. "0100"
  fields: Readonly<Record<number, FieldValue>>; // by field number; bitmaps are derived from them
  // Set by unpack only when the wire carried more bitmaps than the fields need (some senders
  // always send a secondary bitmap, even empty): pack then writes as many, so bytes round-trip.
  bitmapCount?: number;
}
