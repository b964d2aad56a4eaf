// Codes of the ingest channel; prefix each with the channel's name in capitals.
export const ingestErrorCodes = {
} as const satisfies Record<string, string>;
