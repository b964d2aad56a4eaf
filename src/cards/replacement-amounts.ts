import { de, type Message } from "../protocols/iso8583/index.ts";

/**
 * Field 95 (replacement amounts, ISO 8583:1987 an 42): actual transaction amount n12, actual
 * settlement amount n12, actual transaction fee x+n8, actual settlement fee x+n8. A reversal that
 * carries it is partial: the transaction stands at the actual amount, and only the difference to
 * the original's amount is undone (docs/decisions/0028). Pure: no database, no socket.
 */
export type ReplacementAmount =
  | { kind: "absent" }                           // no field 95: a full reversal
  | { kind: "actual"; actualMinor: bigint }      // the amount the transaction now stands at
  | { kind: "malformed" };

const FIELD_95 = /^(\d{12})(\d{12})[CD]\d{8}[CD]\d{8}$/;

export function replacementAmountOf(message: Message): ReplacementAmount {
  const value = message.fields[de.replacementAmounts];
  if (value === undefined) return { kind: "absent" };
  if (typeof value !== "string") return { kind: "malformed" };
  const match = FIELD_95.exec(value);
  if (match?.[1] === undefined) return { kind: "malformed" };
  const actualMinor = BigInt(match[1]);
  // All zeros is how many acquirers spell "no replacement": the whole amount is reversed.
  return actualMinor === 0n ? { kind: "absent" } : { kind: "actual", actualMinor };
}

/** Field 95 for an actual amount (settlement amount the same, no fees): what an acquirer sends. */
export function replacementAmountsField(actualMinor: bigint): string {
  const amount = actualMinor.toString().padStart(12, "0");
  return `${amount}${amount}C00000000C00000000`;
}
