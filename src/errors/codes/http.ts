// Codes of the http channel; prefix each with the channel's name in capitals.
export const httpErrorCodes = {
} as const satisfies Record<string, string>;
