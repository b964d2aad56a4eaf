// Bounds of the ach channel: every queue, buffer, size and timeout, each with its unit and why.
export const achLimits = {
} as const;
