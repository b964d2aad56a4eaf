// Bounds of the http channel: every queue, buffer, size and timeout, each with its unit and why.
export const httpLimits = {
} as const;
