import { pino, type Logger } from "pino";
import { currentRequestId } from "./request-context.ts";

/**
 * Structured JSON logs with keys and references. Card data never reaches a log: the redaction
 * below is the last line of defence; the first is that codecs only hand out masked values.
 */
export function createLogger(options: { level?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  return pino(
    {
      level: options.level ?? process.env.CLEARLINE_LOG_LEVEL ?? "info",
      base: { service: "clearline" },
      // Every line written while serving a request names it (src/observability/request-context.ts).
      mixin: () => {
        const requestId = currentRequestId();
        return requestId === undefined ? {} : { request_id: requestId };
      },
      redact: {
        paths: ["pan", "*.pan", "track2", "*.track2", "pinBlock", "*.pinBlock", "password", "*.password", "apiKey", "*.apiKey", "authorization", "*.authorization", "req.headers.authorization"],
        censor: "[redacted]",
      },
    },
    options.destination ?? process.stderr,
  );
}

export type { Logger };
