// Bounds of the ingest channel: every queue, buffer, size and timeout, each with its unit and why.
export const ingestLimits = {
} as const;
