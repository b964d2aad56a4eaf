/**
 * Exact decimal arithmetic for control sums. CtrlSum adds amounts across currencies (pain.001
 * mixes JPY and EUR in one sum), so it cannot be done in minor units of one currency; it is done
 * on the decimal text itself as a bigint with a scale. Never a float.
 */
export interface ExactDecimal {
  units: bigint;   // value * 10^scale
  scale: number;   // digits after the decimal point
}

const decimalPattern = /^(\d+)(?:\.(\d+))?$/;

export function parseExactDecimal(text: string): ExactDecimal | undefined {
  const match = decimalPattern.exec(text);
  if (!match) return undefined;
  const fraction = match[2] ?? "";
  return { units: BigInt((match[1] ?? "0") + fraction), scale: fraction.length };
}

function rescale(value: ExactDecimal, scale: number): bigint {
  return value.units * 10n ** BigInt(scale - value.scale);
}

export function addExactDecimal(a: ExactDecimal, b: ExactDecimal): ExactDecimal {
  const scale = Math.max(a.scale, b.scale);
  return { units: rescale(a, scale) + rescale(b, scale), scale };
}

export function equalExactDecimal(a: ExactDecimal, b: ExactDecimal): boolean {
  const scale = Math.max(a.scale, b.scale);
  return rescale(a, scale) === rescale(b, scale);
}

export function formatExactDecimal(value: ExactDecimal): string {
  if (value.scale === 0) return value.units.toString();
  const digits = value.units.toString().padStart(value.scale + 1, "0");
  return `${digits.slice(0, digits.length - value.scale)}.${digits.slice(digits.length - value.scale)}`;
}

export const zeroDecimal: ExactDecimal = { units: 0n, scale: 0 };
