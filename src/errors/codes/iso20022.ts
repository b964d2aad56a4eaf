// Codes of the iso20022 channel; prefix each with the channel's name in capitals.
export const iso20022ErrorCodes = {
} as const satisfies Record<string, string>;
