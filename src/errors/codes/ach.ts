// Codes of the ach channel; prefix each with the channel's name in capitals.
export const achErrorCodes = {
} as const satisfies Record<string, string>;
