import { createHmac, timingSafeEqual } from "node:crypto";
import { EventEmitter } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A real HTTP webhook receiver, written the way a customer would write one (docs/webhooks.md):
 * it checks the Standard Webhooks signature with its own HMAC code (not clearline's), refuses a
 * bad one with 401, and applies each Webhook-Id's effect once (a redelivery is acknowledged
 * and counted, not applied again).
 */
export interface ReceivedWebhook { id: string; type: string; body: unknown }

export interface WebhookReceiver {
  url: string;
  posts: Map<string, number>;          // Webhook-Id -> POSTs that carried it (signature valid)
  effects: ReceivedWebhook[];          // first delivery of each Webhook-Id, in order
  refusedSignatures: number;
  /** Answer this status instead of 2xx to the next `count` valid POSTs. */
  failNext(count: number, status: number): void;
  /** Resolves once `predicate` holds, checked after every POST (an event, never a sleep). */
  until(predicate: () => boolean): Promise<void>;
  close(): Promise<void>;
}

function signatureValid(secret: string, id: string, timestamp: string, body: string, header: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = Buffer.from("v1," + createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64"));
  return header.split(" ").some((s) => Buffer.byteLength(s) === expected.length && timingSafeEqual(Buffer.from(s), expected));
}

export async function startWebhookReceiver(secret: () => string): Promise<WebhookReceiver> {
  const events = new EventEmitter();
  const posts = new Map<string, number>();
  const effects: ReceivedWebhook[] = [];
  let failing = { count: 0, status: 500 };
  let refused = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const id = String(request.headers["webhook-id"] ?? "");
      const timestamp = String(request.headers["webhook-timestamp"] ?? "");
      const valid = id !== "" && /^\d+$/.test(timestamp) && signatureValid(secret(), id, timestamp, body, String(request.headers["webhook-signature"] ?? ""));
      if (!valid) {
        refused++;
        response.writeHead(401).end();
      } else if (failing.count > 0) {
        failing = { ...failing, count: failing.count - 1 };
        posts.set(id, (posts.get(id) ?? 0) + 1);
        response.writeHead(failing.status).end();
      } else {
        const seen = posts.get(id) ?? 0;
        posts.set(id, seen + 1);
        if (seen === 0 || !effects.some((e) => e.id === id)) {
          const parsed = JSON.parse(body) as { type: string };
          effects.push({ id, type: parsed.type, body: parsed });
        }
        response.writeHead(204).end();
      }
      events.emit("post");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    posts, effects,
    get refusedSignatures() { return refused; },
    failNext(count, status) { failing = { count, status }; },
    until(predicate) {
      if (predicate()) return Promise.resolve();
      return new Promise((resolve) => {
        const check = () => { if (predicate()) { events.off("post", check); resolve(); } };
        events.on("post", check);
      });
    },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
