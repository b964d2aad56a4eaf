// Bounds of the iso8583 channel: every queue, buffer, size and timeout, each with its unit and why.
export const iso8583Limits = {
} as const;
