import type { AddressInfo } from "node:net";
import { Worker } from "node:worker_threads";
import { buildHttpServer } from "../src/api/server.ts";
import { withTransaction } from "../src/db/transaction.ts";
import { claim, claimTransactionSettings, complete } from "../src/idempotency/records.ts";
import { requestDigest } from "../src/idempotency/request-digest.ts";
import { openAccount } from "../src/ledger/accounts.ts";
import { advanceProjection } from "../src/ledger/balance.ts";
import { postTransfer } from "../src/ledger/post-transfers.ts";
import { createLogger } from "../src/observability/logger.ts";
import { createPayment } from "../src/payments/payments.ts";
import { createTenant } from "../src/tenants/tenants.ts";
import { percentile, ratioRow, throughput, type BenchReport } from "./harness.ts";
import { benchDatabase } from "./support/database.ts";

const REQUESTS = 3_000;

interface LoadResult { opsPerSecond: number; latenciesMs: number[]; failure?: string }

/** HTTP load from a worker thread (bench/support/http-load-worker.mjs). */
function httpLoad(data: { url: string; headers: Record<string, string>; bodies: string[]; keys: string[]; concurrency: number; expectStatus: number; expectReplay: boolean }): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./support/http-load-worker.mjs", import.meta.url), { workerData: data, execArgv: [] });
    worker.once("message", (result: LoadResult) => (result.failure ? reject(new Error(result.failure)) : resolve(result)));
    worker.once("error", reject);
  });
}
const CONCURRENCY = 16;
const DEBTORS = 64;   // spread over many customers so row locks on one debtor do not serialize the run

/**
 * First-time POST /v1/payments through the real HTTP server (fastify, validation, auth, the
 * fast-path lookup, the one transaction) against the same transaction (claim + payment + posting
 * + completion) issued directly through pg; replays against first-time POSTs; latency.
 */
export async function run(): Promise<BenchReport> {
  const db = await benchDatabase(CONCURRENCY + 4);
  const app = buildHttpServer({ pool: db.pool, logger: createLogger({ level: "error" }) });
  try {
    const tenant = await createTenant(db.pool, "bench");
    if (!tenant.ok) throw new Error(tenant.error.message);
    const tenantId = tenant.value.tenantId;
    await withTransaction(db.pool, async (tx) => {
      await openAccount(tx, { tenantId, accountId: "settlement", kind: "settlement", currency: "USD" });
      await openAccount(tx, { tenantId, accountId: "merchant", kind: "customer", currency: "USD" });
      for (let i = 0; i < DEBTORS; i++) {
        await openAccount(tx, { tenantId, accountId: `payer-${i}`, kind: "customer", currency: "USD" });
        await postTransfer(tx, { tenantId, transferKey: `fund-${i}`, kind: "funding", valueDate: "2026-12-02", legs: [
          { accountId: "settlement", direction: "D", amountMinor: 10n ** 12n, currency: "USD" },
          { accountId: `payer-${i}`, direction: "C", amountMinor: 10n ** 12n, currency: "USD" },
        ] });
      }
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const body = (label: string, i: number) => ({ client_reference: `${label}-${i}`, amount: "1.00", currency: "USD", debtor_account: `payer-${i % DEBTORS}`, creditor_account: "merchant" });
    const load = (label: string, expectReplay: boolean) => httpLoad({
      url: `${baseUrl}/v1/payments`,
      headers: { "content-type": "application/json", authorization: `Bearer ${tenant.value.apiKey}` },
      bodies: Array.from({ length: REQUESTS }, (_, i) => JSON.stringify(body(label, i))),
      keys: Array.from({ length: REQUESTS }, (_, i) => `${label}-key-${i}`),
      concurrency: CONCURRENCY, expectStatus: 201, expectReplay,
    });

    // The service folds entries into the balance projection every few seconds; do the same
    // before each phase, so neither phase pays for summing the other's entries.
    const project = () => advanceProjection(db.pool, tenantId);
    await project();
    const direct = await throughput(REQUESTS, CONCURRENCY, async (i) => {
      const b = body("direct", i);
      const canonical = { client_reference: b.client_reference, amount_minor: "100", currency: "USD", debtor_account: b.debtor_account, creditor_account: b.creditor_account, description: null };
      const scope = { tenantId, endpoint: "POST /v1/payments", key: `direct-key-${i}` };
      await withTransaction(db.pool, async (tx) => {
        const claimed = await claim(tx, scope, requestDigest(canonical), canonical);
        if (claimed.kind !== "claimed") throw new Error("direct claim failed");
        const outcome = await createPayment(tx, tenantId, { clientReference: b.client_reference, amountMinor: 100n, currency: "USD", debtorAccount: b.debtor_account, creditorAccount: b.creditor_account, description: null }, scope.endpoint);
        if (outcome.kind !== "created") throw new Error("direct payment refused");
        await complete(tx, scope, claimed.attempt, { status: 201, body: JSON.stringify(outcome.payment, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v)), effectRef: outcome.payment.paymentId });
      }, { localSettings: claimTransactionSettings });
    });
    await project();
    const first = await load("http", false);
    const replay = await load("http", true);

    return {
      name: "api",
      rows: [
        ratioRow({ case: `first-time POST /v1/payments, ${CONCURRENCY} clients`, value: first.opsPerSecond, unit: "req/s", baseline: direct.opsPerSecond, baselineCase: "same transaction via pg", goal: ">= 0.8" }),
        ratioRow({ case: `replayed POST, ${CONCURRENCY} clients`, value: replay.opsPerSecond, unit: "req/s", baseline: first.opsPerSecond, baselineCase: "first-time POST", goal: ">= 5" }),
        { case: "first-time POST latency p50", value: percentile(first.latenciesMs, 50), unit: "ms" },
        { case: "first-time POST latency p99", value: percentile(first.latenciesMs, 99), unit: "ms" },
        { case: "replayed POST latency p50", value: percentile(replay.latenciesMs, 50), unit: "ms" },
        { case: "replayed POST latency p99", value: percentile(replay.latenciesMs, 99), unit: "ms" },
      ],
      notes: [`${REQUESTS} requests per case; the HTTP load comes from a worker thread; server, load and PostgreSQL share the machine's 2 cores`],
    };
  } finally {
    await app.close();
    await db.close();
  }
}
