import { limits } from "../../config/limits.ts";
import type { Dictionary, FieldValue, Message, Sensitivity, TlvElement } from "./types.ts";

/**
 * Card data never reaches a log or an error in clear (PCI DSS: at most the first six and last
 * four digits of a PAN may be shown). These helpers are the only way values leave the codec for
 * people to read.
 */

// Fields masked whatever the dictionary says: PAN, track 2, track 1, PIN block, EMV data.
export const alwaysSensitiveFields: Readonly<Record<number, Sensitivity>> = {
  2: "pan",
  35: "track",
  45: "track",
  52: "secret",
  55: "secret",
};

const panShownDigitsMin = 13; // below this, BIN + last four would reveal too large a share

/** "4111111111111111" -> "411111******1111"; short values keep only their last four. */
export function maskPan(pan: string): string {
  if (pan.length >= panShownDigitsMin) return pan.slice(0, 6) + "*".repeat(pan.length - 10) + pan.slice(-4);
  if (pan.length > 4) return "*".repeat(pan.length - 4) + pan.slice(-4);
  return "*".repeat(pan.length);
}

/** Track 1 or 2: the PAN at its start is masked as a PAN, everything after it (expiry, service code, CVV) fully. */
export function maskTrack(track: string): string {
  const match = /^(%?B|;)?(\d*)/.exec(track);
  const lead = match?.[1] ?? "";
  const pan = match?.[2] ?? "";
  const rest = track.slice(lead.length + pan.length);
  return lead + maskPan(pan) + "*".repeat(rest.length);
}

export function maskSecret(text: string): string {
  return "*".repeat(text.length);
}

/** Any run of 12 or more digits is masked as a PAN: a malformed message can shift card data into any field. */
export function maskDigitRuns(text: string): string {
  return text.replace(/\d{12,}/g, (run) => maskPan(run));
}

export function maskText(text: string, sensitivity: Sensitivity | undefined): string {
  switch (sensitivity) {
    case "pan": return maskPan(text);
    case "track": return maskTrack(text);
    case "secret": return maskSecret(text);
    case undefined: return text;
  }
}

export function maskFieldValue(value: FieldValue, sensitivity: Sensitivity | undefined): FieldValue {
  if (sensitivity === undefined) return value;
  if (typeof value === "string") return maskText(value, sensitivity);
  if (Array.isArray(value)) {
    // Tags say what the chip sent and are not card data; the values are.
    return (value as readonly TlvElement[]).map((element) => ({ tag: element.tag, value: maskSecret(element.value) }));
  }
  const masked: Record<string, string> = {};
  for (const [name, text] of Object.entries(value as Record<string, string>)) masked[name] = maskText(text, sensitivity);
  return masked;
}

export function sensitivityOf(fieldNumber: number, dictionary?: Dictionary): Sensitivity | undefined {
  return alwaysSensitiveFields[fieldNumber] ?? dictionary?.fields[fieldNumber]?.sensitive;
}

/** A copy of the message fit for logs: fields 2, 35, 45, 52, 55 and the dictionary's sensitive fields masked. */
export function maskMessage(message: Message, dictionary?: Dictionary): Message {
  const fields: Record<number, FieldValue> = {};
  for (const [key, value] of Object.entries(message.fields)) {
    const fieldNumber = Number(key);
    fields[fieldNumber] = maskFieldValue(value, sensitivityOf(fieldNumber, dictionary));
  }
  return { mti: message.mti, fields };
}

/** The value quoted in an error: masked by sensitivity, digit runs masked, cut to a bound. */
export function maskForError(text: string, sensitivity: Sensitivity | undefined): string {
  const masked = maskDigitRuns(maskText(text, sensitivity));
  const charsMax = limits.iso8583.errorValueCharsMax;
  return masked.length > charsMax ? `${masked.slice(0, charsMax)}...` : masked;
}
