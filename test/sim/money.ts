/** USD minor units <-> the API's decimal text, without floats. */
export function minorText(amountMinor: bigint | number): string {
  const value = BigInt(amountMinor);
  const sign = value < 0n ? "-" : "";
  const abs = value < 0n ? -value : value;
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, "0")}`;
}

export function minorOf(text: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (!match) throw new Error(`not a USD amount: ${text}`);
  const minor = BigInt(match[2] ?? "0") * 100n + BigInt((match[3] ?? "").padEnd(2, "0") || "0");
  return match[1] === "-" ? -minor : minor;
}
