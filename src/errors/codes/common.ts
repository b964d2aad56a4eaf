// Codes shared by every channel. Each entry: code -> what it means for the person who sees it.
export const commonErrorCodes = {
  INPUT_TOO_LARGE: "The input exceeds its configured size bound; nothing was read past the bound.",
  INPUT_EMPTY: "The input holds no data.",
  CURRENCY_UNKNOWN: "The currency is not an ISO 4217 code known to clearline.",
  AMOUNT_INVALID: "The amount is not a decimal number with at most the currency's minor-unit digits.",
  AMOUNT_TOO_MANY_DECIMALS: "The amount has more decimals than the currency's exponent allows; it is refused, never rounded.",
  AMOUNT_NOT_POSITIVE: "The amount must be greater than zero.",
  AMOUNT_TOO_LARGE: "The amount exceeds the largest amount clearline accepts.",
  FORMAT_UNKNOWN: "The file is neither a NACHA ACH file nor an ISO 20022 XML document.",
  TEXT_CHARACTER_INVALID: "A text holds a NUL character (U+0000) or an unpaired UTF-16 surrogate, which cannot be stored; it is refused where it arrives (HTTP 422 naming the field, or a finding with its position in a file).",
  CONFIG_INVALID: "A configuration value is missing, malformed or outside its allowed range.",
} as const satisfies Record<string, string>;
