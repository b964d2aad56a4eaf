import type { AddressInfo } from "node:net";
import { buildHttpServer } from "../../src/api/server.ts";
import { registerCardAuthorizationRoutes } from "../../src/api/routes/card-authorizations.ts";
import type { CardKeys } from "../../src/cards/card-key.ts";
import { limits } from "../../src/config/limits.ts";
import type { Pool } from "../../src/db/pool.ts";
import { CardAuthorizer } from "../../src/cards/card-authorizer.ts";
import { schemeLinkStore } from "../../src/cards/outbound-store.ts";
import { OutboundConnection, type OutboundOptions } from "../../src/gateway/outbound-connection.ts";
import type { Logger } from "../../src/observability/logger.ts";
import { codec, eventually } from "./support.ts";

export interface TestGateway {
  connection: OutboundConnection;
  authorizer: CardAuthorizer;
  baseUrl: string;
  stop(): Promise<void>;
}

/**
 * For a test of what happens when the scheme does not answer in time: the scheme in that test never
 * answers (drop, hold) or answers later than this whatever the load, so the short bound is safe.
 */
export const impatient: Partial<OutboundOptions> = { responseTimeoutMs: 400 };

/**
 * The acquirer side as `clearline serve` wires it: an outbound connection and the HTTP route, with
 * short retry and reconnect backoffs. The response bound is long (a busy machine never turns an
 * answered request into a reversal); tests of the timeout pass `impatient`.
 */
export async function startTestGateway(pool: Pool, keys: CardKeys, logger: Logger, schemePort: number, overrides: Partial<OutboundOptions> = {}): Promise<TestGateway> {
  const connection = new OutboundConnection(schemeLinkStore(pool), logger, {
    name: "scheme-test", host: "127.0.0.1", port: schemePort, codec, acquirerId: "423935",
    responseTimeoutMs: 120_000, inflightMax: limits.iso8583.outboundInflightMax, slotWaitMs: 200, echoIdleMs: 60_000,
    reconnectBackoffMs: 25, reconnectBackoffMaxMs: 200, reversalRetryBackoffMs: 50, reversalRetryBackoffMaxMs: 200,
    reversalJobIntervalMs: 50, reversalBatchRowsMax: limits.iso8583.reversalBatchRowsMax, stanBlockSize: limits.iso8583.stanBlockSize,
    ...overrides,
  });
  const authorizer = new CardAuthorizer(pool, keys, connection, logger);
  const app = buildHttpServer({ pool, logger, extraRoutes: [(server) => registerCardAuthorizationRoutes(server, { authorizer })] });
  await app.listen({ host: "127.0.0.1", port: 0 });
  connection.start();
  await eventually(() => connection.isSignedOn, "sign-on");
  return {
    connection, authorizer,
    baseUrl: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    async stop() {
      await app.close();
      await connection.stop();
    },
  };
}

export interface AuthorizationCall {
  status: number;
  json: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
  replayed: boolean;
}

export async function authorizeOverHttp(baseUrl: string, apiKey: string, idempotencyKey: string, body: Record<string, string>): Promise<AuthorizationCall> {
  const response = await fetch(`${baseUrl}/v1/card-authorizations`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}`, "idempotency-key": idempotencyKey },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, json: JSON.parse(text), text, replayed: response.headers.get("idempotent-replayed") === "true" };
}
