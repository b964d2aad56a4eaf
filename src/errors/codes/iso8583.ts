// Codes of the iso8583 channel; prefix each with the channel's name in capitals.
export const iso8583ErrorCodes = {
} as const satisfies Record<string, string>;
