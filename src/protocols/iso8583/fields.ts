import type { Message } from "./types.ts";

/**
 * A field's value as text, undefined when it is absent or not a plain text field (a composite or
 * TLV field). Name the field: `textField(message, de.retrievalReferenceNumber)`.
 */
export function textField(message: Message, fieldNumber: number): string | undefined {
  const value = message.fields[fieldNumber];
  return typeof value === "string" ? value : undefined;
}
