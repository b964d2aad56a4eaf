const weights = [3, 7, 1, 3, 7, 1, 3, 7] as const;

/** Check digit of an 8-digit routing prefix (ABA): weights 3 7 1 3 7 1 3 7, then up to a multiple of 10. */
export function routingCheckDigit(routing8: string): string | undefined {
  if (!/^\d{8}$/.test(routing8)) return undefined;
  let sum = 0;
  for (let i = 0; i < 8; i++) sum += (routing8.charCodeAt(i) - 48) * (weights[i] ?? 0);
  return String((10 - (sum % 10)) % 10);
}
