import type { AddressInfo } from "node:net";
import { buildHttpServer } from "../src/api/server.ts";
import { withTransaction } from "../src/db/transaction.ts";
import { limits } from "../src/config/limits.ts";
import type { Pool } from "../src/db/pool.ts";
import { claim, claimTransactionSettings, complete } from "../src/idempotency/records.ts";
import { requestDigest } from "../src/idempotency/request-digest.ts";
import { createPayment } from "../src/payments/payment-batch.ts";
import { paymentGroupCommitOf } from "../src/payments/payment-group-commit.ts";
import { applyPaymentRequest } from "../src/payments/payment-request.ts";
import { advanceProjection } from "../src/ledger/balance.ts";
import { createLogger } from "../src/observability/logger.ts";
import { intentId } from "../src/payments/payment.ts";
import { createTenant } from "../src/tenants/tenants.ts";
import { alternate, percentile, roundsRow, throughput, type BenchReport } from "./harness.ts";
import { benchDatabase } from "./support/database.ts";
import { rawPayment, type RawPayment } from "./support/raw-payment.ts";
import { fundDebtors, httpLoader } from "./support/payments-load.ts";

const REQUESTS = 1_000;   // per side and round
const ROUNDS = 3;


const CONCURRENCY = 16;
const GROUP_CONCURRENCY = 64;   // issue 15's group-commit row: 64 clients
const DEBTORS = 64;   // spread over many customers so row locks on one debtor do not serialize the run

/**
 * First-time POST /v1/payments through the real HTTP server (fastify, validation, auth, the
 * fast-path lookup, the one transaction) against the raw minimum of the same database work written
 * by hand (bench/support/raw-payment.ts: the same rows in four statements), alternated in rounds;
 * replays against first-time POSTs of the same keys, alternated; latency.
 */
export async function run(): Promise<BenchReport> {
  const db = await benchDatabase(GROUP_CONCURRENCY + 4); // the raw side at 64 clients holds 64 connections
  const app = buildHttpServer({ pool: db.pool, logger: createLogger({ level: "error" }) });
  const loader = httpLoader();
  try {
    const tenant = await createTenant(db.pool, "bench");
    if (!tenant.ok) throw new Error(tenant.error.message);
    const tenantId = tenant.value.tenantId;
    await fundDebtors(db.pool, tenantId, DEBTORS);
    await app.listen({ host: "127.0.0.1", port: 0 });
    const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const body = (label: string, i: number) => ({ client_reference: `${label}-${i}`, amount: "1.00", currency: "USD", debtor_account: `payer-${i % DEBTORS}`, creditor_account: "merchant" });
    const load = (label: string, expectReplay: boolean, concurrency = CONCURRENCY) => loader.load({
      url: `${baseUrl}/v1/payments`,
      headers: { "content-type": "application/json", authorization: `Bearer ${tenant.value.apiKey}` },
      bodies: Array.from({ length: REQUESTS }, (_, i) => JSON.stringify(body(label, i))),
      keys: Array.from({ length: REQUESTS }, (_, i) => `${label}-key-${i}`),
      concurrency, expectStatus: 201, expectReplay,
    });
    // The service folds entries into the balance projection every few seconds; do the same
    // before each side, so neither pays for summing the other's entries.
    const project = () => advanceProjection(db.pool, tenantId);
    let rawRuns = 0;
    const rawAt = (concurrency: number) => async () => {
      const label = `raw${rawRuns++}`;
      const payments = Array.from({ length: REQUESTS }, (_, i) => rawPaymentOf(tenantId, label, i));
      await project();
      return (await throughput(REQUESTS, concurrency, (i) => withTransaction(db.pool, (tx) => rawPayment(tx, payments[i] as RawPayment)))).opsPerSecond;
    };
    const raw = rawAt(CONCURRENCY);
    const latencies: number[] = [];
    const http = async (round: number) => {
      await project();
      const result = await load(`http${round}`, false);
      latencies.push(...result.latenciesMs);
      return result.opsPerSecond;
    };
    // The service's own transaction without HTTP (claim, createPayment, completion), against the
    // same baseline: which part of the gap is the database work and which is the HTTP server.
    const inProcess = async (round: number) => {
      await project();
      return (await throughput(REQUESTS, CONCURRENCY, (i) => servicePayment(db.pool, tenantId, `tx${round}-${i}`, `payer-${i % DEBTORS}`))).opsPerSecond;
    };
    // Group commit (docs/decisions/0043): 64 HTTP clients against the raw per-request transaction at 64 clients.
    const httpGroup = async (round: number) => {
      await project();
      return (await load(`group${round}`, false, GROUP_CONCURRENCY)).opsPerSecond;
    };
    // One untimed pass of each side first: the server's first requests run cold (its JIT, the
    // pool's connections, the plans of its prepared statements), which would otherwise land in
    // the HTTP side's first round only.
    await rawAt(GROUP_CONCURRENCY)();
    await load("warmup", false, GROUP_CONCURRENCY);
    const groupRounds = await alternate(ROUNDS, rawAt(GROUP_CONCURRENCY), httpGroup);
    // The same group-committed path called in-process (validation, fast path, batching writer; no HTTP server): which part of the gap is HTTP.
    const groupCommit = paymentGroupCommitOf(db.pool);
    const inProcessGroupAt = (concurrency: number) => async (round: number) => {
      await project();
      const label = `ingroup${concurrency}-${round}`;
      return (await throughput(REQUESTS, concurrency, async (i) => {
        const reply = await applyPaymentRequest(db.pool, tenantId, "POST /v1/payments", `${label}-key-${i}`, body(label, i), { groupCommit });
        if (reply.status !== 201) throw new Error(`bench payment refused: ${reply.body}`);
      })).opsPerSecond;
    };
    const groupInProcessRounds = await alternate(ROUNDS, rawAt(GROUP_CONCURRENCY), inProcessGroupAt(GROUP_CONCURRENCY));
    const transactionRounds = await alternate(ROUNDS, raw, inProcess);
    // POST /v1/payments at 16 clients is group-committed too: its in-process twin, so the HTTP share of the 16-client gap can be read off.
    const groupInProcess16Rounds = await alternate(ROUNDS, raw, inProcessGroupAt(CONCURRENCY));
    const rounds = await alternate(ROUNDS, raw, http);
    // Replays against first-time POSTs, alternated: each round's first POSTs are replayed right after them.
    const replayLatencies: number[] = [];
    const firstOfReplayed = async (round: number) => {
      await project();
      return (await load(`rep${round}`, false)).opsPerSecond;
    };
    const replayOf = async (round: number) => {
      const result = await load(`rep${round}`, true);
      replayLatencies.push(...result.latenciesMs);
      return result.opsPerSecond;
    };
    const replayRounds = await alternate(ROUNDS, firstOfReplayed, replayOf);
    return {
      name: "api",
      rows: [
        roundsRow(`first-time POST /v1/payments, ${CONCURRENCY} clients`, "req/s", "the same rows by hand via pg (4 statements, 2 round trips)", rounds, ">= 0.9"),
        roundsRow(`first-time POST /v1/payments with group commit, ${GROUP_CONCURRENCY} clients`, "payments/s", `the same rows by hand via pg, one transaction per payment, ${GROUP_CONCURRENCY} clients`, groupRounds, ">= 2"),
        roundsRow(`the service's group-committed payments in-process (no HTTP), ${GROUP_CONCURRENCY} clients`, "payments/s", `the same rows by hand via pg, one transaction per payment, ${GROUP_CONCURRENCY} clients`, groupInProcessRounds),
        roundsRow(`the service's payment transaction in-process (no HTTP), ${CONCURRENCY} clients`, "payments/s", "the same rows by hand via pg (4 statements, 2 round trips)", transactionRounds),
        roundsRow(`the service's group-committed payments in-process (no HTTP), ${CONCURRENCY} clients`, "payments/s", "the same rows by hand via pg (4 statements, 2 round trips)", groupInProcess16Rounds),
        roundsRow(`replayed POST, ${CONCURRENCY} clients`, "req/s", `first-time POST of the keys replayed, ${CONCURRENCY} clients`, replayRounds, ">= 5"),
        { case: "first-time POST latency p50", value: percentile(latencies, 50), unit: "ms" },
        { case: "first-time POST latency p99", value: percentile(latencies, 99), unit: "ms" },
        { case: "replayed POST latency p50", value: percentile(replayLatencies, 50), unit: "ms" },
        { case: "replayed POST latency p99", value: percentile(replayLatencies, 99), unit: "ms" },
      ],
      notes: [`${REQUESTS} requests per side and round, ${ROUNDS} rounds alternated (baseline first) after one untimed pass of each side; the HTTP load comes from one worker thread serving every load of the run, warm (a minimal keep-alive HTTP/1.1 client, one connection per client; docs/decisions/0047, 0054); server, load and PostgreSQL share the machine's cores`],
    };
  } finally {
    await loader.close();
    await app.close();
    await db.close();
  }
}

/** What POST /v1/payments does in the database, called directly: the idempotency claim, the payment through the record core, the completion. */
async function servicePayment(pool: Pool, tenantId: string, clientReference: string, debtorAccount: string): Promise<void> {
  const canonical = { client_reference: clientReference, amount_minor: "100", currency: "USD", debtor_account: debtorAccount, creditor_account: "merchant", description: null };
  const scope = { tenantId, endpoint: "POST /v1/payments", key: `${clientReference}-key` };
  await withTransaction(pool, async (tx) => {
    const claimed = await claim(tx, scope, requestDigest(canonical), canonical);
    if (claimed.kind !== "claimed") throw new Error("bench keys are new");
    const outcome = await createPayment(tx, tenantId, { clientReference, amountMinor: 100n, currency: "USD", debtorAccount, creditorAccount: "merchant", description: null }, scope.endpoint, scope.key);
    if (outcome.kind !== "created") throw new Error(`bench payment refused: ${outcome.refusal.code}`);
    await complete(tx, scope, claimed.attempt, { status: 201, body: JSON.stringify({ payment_id: outcome.payment.paymentId }), effectRef: outcome.payment.paymentId });
  }, { localSettings: claimTransactionSettings });
}

/** Everything of a raw payment that is not SQL, computed before the clock starts. */
function rawPaymentOf(tenantId: string, label: string, i: number): RawPayment {
  const clientReference = `${label}-${i}`;
  const canonical = { client_reference: clientReference, amount_minor: "100", currency: "USD", debtor_account: `payer-${i % DEBTORS}`, creditor_account: "merchant", description: null };
  const paymentId = intentId("pay", tenantId, clientReference);
  return {
    tenantId, endpoint: "POST /v1/payments", idempotencyKey: `${label}-key-${i}`, requestDigest: requestDigest(canonical), requestCanonical: JSON.stringify(canonical),
    clientReference, paymentId, fingerprint: requestDigest({ ...canonical, kind: "payment" }), amountMinor: 100n, currency: "USD",
    debtorAccount: canonical.debtor_account, creditorAccount: canonical.creditor_account, valueDate: new Date().toISOString().slice(0, 10),
    responseBody: JSON.stringify({ payment_id: paymentId, client_reference: clientReference, status: "succeeded", amount: "1.00", currency: "USD" }),
    leaseMs: limits.http.idempotencyLeaseMs, windowMs: limits.http.idempotencyWindowMs,
  };
}
