import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { limits } from "../config/limits.ts";
import { problemReply } from "../requests/reply.ts";

/**
 * Reads and discards what is left of a refused body, so that the client, still sending, gets
 * the 413 instead of a connection reset (closing a socket with unread input makes TCP send RST,
 * which destroys the response on its way). At most `bytesMax` more bytes are read: true when the
 * body ended within them, false when the caller must close the connection instead.
 */
export function drainRequestBody(raw: IncomingMessage, bytesMax: number): Promise<boolean> {
  if (raw.complete || raw.readableEnded) return Promise.resolve(true);
  const declared = Number(raw.headers["content-length"]);
  if (Number.isFinite(declared) && declared - raw.socket.bytesRead > bytesMax) return Promise.resolve(false);
  return new Promise((resolve) => {
    let drainedBytes = 0;
    const done = (ended: boolean) => {
      raw.off("data", onData).off("end", onEnd).off("error", onGone).off("close", onGone);
      resolve(ended);
    };
    const onData = (chunk: Buffer) => {
      drainedBytes += chunk.length;
      if (drainedBytes > bytesMax) done(false);
    };
    const onEnd = () => done(true);
    const onGone = () => done(raw.complete);
    raw.on("data", onData).on("end", onEnd).on("error", onGone).on("close", onGone);
    raw.resume();
  });
}

/** The largest body any route accepts (file uploads): a declared length above it is refused up front. */
export function largestBodyBytes(): number {
  return Math.max(limits.http.bodyBytesMax, limits.ingest.httpUploadBytesMax);
}

/**
 * `Expect: 100-continue` with a Content-Length no route accepts: answer 413 at once, before the
 * client sends a byte of the body. Anything else gets its 100 Continue and goes to the routes.
 */
export function refuseOversizeBeforeContinue(server: Server): void {
  server.on("checkContinue", (request: IncomingMessage, response: ServerResponse) => {
    const declared = Number(request.headers["content-length"]);
    if (Number.isFinite(declared) && declared > largestBodyBytes()) {
      const refused = problemReply("REQUEST_TOO_LARGE", `the declared body of ${declared} bytes exceeds ${largestBodyBytes()} bytes, the most any route accepts`);
      response.writeHead(refused.status, { "content-type": refused.contentType, connection: "close", "content-length": Buffer.byteLength(refused.body) }).end(refused.body);
      return;
    }
    response.writeContinue();
    server.emit("request", request, response);
  });
}
