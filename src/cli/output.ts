import { currencyByCode, minorToDecimal } from "../protocols/iso4217/currency.ts";

/**
 * True once the reader of stdout went away (`clearline ... | head -1`): further output is
 * dropped, and the command finishes its work (and stops what it started) without a stack trace.
 */
let stdoutClosed = false;

/** Swallows EPIPE (and writes after it) on stdout; any other stdout failure gets one line on stderr. */
export function watchStdout(stream: NodeJS.WriteStream): void {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED") {
      stdoutClosed = true;
      return;
    }
    process.stderr.write(`clearline: cannot write the output: ${error.message}\n`);
    stdoutClosed = true;
    process.exitCode = 1;
  });
}

function write(text: string): void {
  if (stdoutClosed) return;
  process.stdout.write(text);
}

/**
 * A camelCase field name in snake_case ("webhookSecretsSealed" -> "webhook_secrets_sealed").
 * Anything else is left as it is: a snake_case name, a currency code ("USD") or an account id
 * keying a map of totals, an ISO 8583 field number.
 */
export function snakeCaseKey(key: string): string {
  if (!/^[a-z][A-Za-z0-9]*[A-Z]/.test(key)) return key;
  return key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/**
 * A value as `--json` prints it (docs/decisions/0107): every field name in snake_case, bigints
 * as decimal strings (JSON has no bigint), dates and other objects with toJSON as they serialize.
 * The objects the HTTP API also answers with arrive here already in its shape (paymentView,
 * fileReport, review items, differenceView, ...): this only holds the CLI's own reports to it.
 */
export function snakeCased(value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(snakeCased);
  const withJson = value as { toJSON?: () => unknown };
  if (typeof withJson.toJSON === "function") return withJson.toJSON();
  return Object.fromEntries(Object.entries(value).map(([key, field]) => [snakeCaseKey(key), snakeCased(field)]));
}

/** JSON for machines (`--json`): snake_case names, bigints as decimal strings. */
export function printJson(value: unknown): void {
  write(JSON.stringify(snakeCased(value), null, 2) + "\n");
}

export function printLine(line: string): void {
  write(line + "\n");
}

/**
 * An amount as people read it (docs/decisions/0107): the decimal with its currency, "205.00 USD",
 * never the minor units. An amount in a currency the ISO 4217 table lacks (a rejected record's
 * own text) says that its digits are minor units; no amount prints nothing.
 */
export function moneyText(amountMinor: bigint | string | null, currency: string | null): string {
  if (amountMinor === null || currency === null) return "";
  const minor = typeof amountMinor === "bigint" ? amountMinor : BigInt(amountMinor);
  if (currencyByCode(currency) === undefined) return `${minor} minor units of ${currency}`;
  return `${minorToDecimal(minor, currency)} ${currency}`;
}
