import { advanceProjection } from "../../../src/ledger/balance.ts";
import { apiPaymentKeyOf } from "../../../src/normalize/from-http.ts";
import { simBounds } from "../bounds.ts";
import type { SimContext } from "../context.ts";
import { serviceCall, type HttpOutcome } from "../http.ts";
import { minorOf, minorText } from "../money.ts";
import { broke, covered, describeOutcome, expectSucceeded, overlappedFault, startSpan, withFaultWindow } from "../progress.ts";
import { better, nextIdempotencyKey, sawDedup, type PaymentIntent, type RefundIntent, type World } from "../world.ts";

/**
 * HTTP payments and refunds against the live service: new keys, repeats of a key, concurrent
 * requests with one key, a new key for a known client_reference, and bursts of concurrent
 * payments from one customer that together exceed its balance.
 */

/** What a client learns from one answer, written into the model. */
function learnPayment(world: World, intent: PaymentIntent | RefundIntent, outcome: HttpOutcome, endpointRefKind: "payment" | "refund"): void {
  if (outcome.kind === "unknown" || outcome.status >= 500) {
    intent.told = better(intent.told, "unknown");
    return;
  }
  const code: string | undefined = outcome.json?.code;
  if (outcome.replayed) {
    sawDedup(world, "http", intent.idempotencyKey, "replayed");
    covered(world, "replays answered");
  }
  if (outcome.status === 409 && code === "request_in_progress") {
    sawDedup(world, "http", intent.idempotencyKey, "in_progress");
    return;
  }
  // These answers come from inside the claim's transaction: the key's record was completed with them.
  if (outcome.status === 201 || ["insufficient_funds", "duplicate_client_reference", "refund_exceeds_payment"].includes(code ?? "")) {
    world.answeredKeys.add(`POST /v1/${endpointRefKind === "payment" ? "payments" : "refunds"}|${intent.idempotencyKey}`);
  }
  if (outcome.status === 201 && !outcome.replayed) covered(world, endpointRefKind === "payment" ? "payments applied" : "refunds applied");
  if (code === "insufficient_funds" && !outcome.replayed) covered(world, endpointRefKind === "payment" ? "payments declined for funds" : "refunds declined for funds");
  if (outcome.status === 201) intent.told = "applied";
  else if (code === "insufficient_funds") intent.told = better(intent.told, "declined");
  else if (code === "duplicate_client_reference") {
    // A payment's repeat is decided by the record core: a duplicate of its natural key api:<client_reference>.
    if (!outcome.replayed && endpointRefKind === "payment") sawDedup(world, "http", apiPaymentKeyOf(intent.clientReference), "duplicate");
    intent.told = better(intent.told, "refused");
  } else intent.told = better(intent.told, "refused");
}

function newPayment(ctx: SimContext, debtor: string, creditor: string, amountMinor: number): PaymentIntent {
  const { world } = ctx;
  const clientReference = `sim-${world.seed}-pay-${++world.counters.payment}`;
  const intent: PaymentIntent = {
    clientReference, idempotencyKey: nextIdempotencyKey(world), told: "unknown",
    body: { client_reference: clientReference, amount: minorText(amountMinor), currency: "USD", debtor_account: debtor, creditor_account: creditor },
  };
  world.payments.push(intent);
  return intent;
}

async function sendPayment(ctx: SimContext, intent: PaymentIntent, idempotencyKey = intent.idempotencyKey): Promise<HttpOutcome> {
  const outcome = await serviceCall(ctx, "POST", "/v1/payments", intent.body, { "idempotency-key": idempotencyKey });
  learnPayment(ctx.world, idempotencyKey === intent.idempotencyKey ? intent : { ...intent, idempotencyKey }, outcome, "payment");
  if (idempotencyKey !== intent.idempotencyKey && outcome.kind === "answer" && outcome.status === 201) intent.told = "applied";
  return outcome;
}

function randomPair(ctx: SimContext): [string, string] {
  const debtor = ctx.rng.pick(ctx.world.customers);
  const creditor = ctx.rng.chance(0.6) ? ctx.world.merchant : ctx.rng.pick(ctx.world.customers.filter((c) => c !== debtor));
  return [debtor, creditor];
}

/** A fresh payment: when the debtor's balance covers it, it must be applied (201). */
export async function payNew(ctx: SimContext): Promise<void> {
  const [debtor, creditor] = randomPair(ctx);
  const amountMinor = ctx.rng.int(1, simBounds.paymentAmountMaxMinor);
  const intent = newPayment(ctx, debtor, creditor, amountMinor);
  const balance = await entriesBalance(ctx, debtor);
  const span = startSpan(ctx.world);
  const outcome = await sendPayment(ctx, intent);
  if (balance < BigInt(amountMinor)) return;
  const applied = outcome.kind === "answer" && outcome.status === 201;
  expectSucceeded(ctx.world, `payment ${intent.clientReference}`, applied, describeOutcome(outcome), span,
    `${debtor} holds ${minorText(balance)}, it asks ${minorText(amountMinor)}`);
}

/** The same request with the same key again: answered from the stored response, nothing posted. */
export async function payRepeat(ctx: SimContext): Promise<void> {
  const intent = ctx.rng.pick(ctx.world.payments);
  await sendPayment(ctx, intent);
}

/** A known client_reference under a new key: the intent is protected for ever, whatever the key. */
export async function payNewKeySameReference(ctx: SimContext): Promise<void> {
  const intent = ctx.rng.pick(ctx.world.payments);
  await sendPayment(ctx, intent, nextIdempotencyKey(ctx.world));
}

export async function paySameKeyConcurrently(ctx: SimContext): Promise<void> {
  const [debtor, creditor] = randomPair(ctx);
  const intent = newPayment(ctx, debtor, creditor, ctx.rng.int(1, simBounds.paymentAmountMaxMinor));
  const copies = ctx.rng.int(2, simBounds.sameKeyConcurrentMax);
  await Promise.all(Array.from({ length: copies }, () => sendPayment(ctx, intent)));
}

/** Entries-derived balance of one account at this moment (the truth the burst is sized against). */
async function entriesBalance(ctx: SimContext, accountId: string): Promise<bigint> {
  const { rows } = await ctx.pool.query<{ balance: string }>(
    `SELECT (coalesce(sum(amount_minor) FILTER (WHERE direction = 'C'), 0) - coalesce(sum(amount_minor) FILTER (WHERE direction = 'D'), 0))::text AS balance
       FROM ledger_entry WHERE tenant_id = $1 AND account_id = $2`, [ctx.world.tenantId, accountId]);
  return BigInt(rows[0]?.balance ?? "0");
}

/**
 * Up to 64 concurrent payments from one customer whose total exceeds its balance: exactly the
 * ones the balance covers may succeed. Optionally the projection is advanced in a loop meanwhile,
 * and optionally the service is killed (-9) mid-burst and restarted.
 */
export async function payBurst(ctx: SimContext): Promise<void> {
  const { rng } = ctx;
  const debtor = rng.pick(ctx.world.customers);
  const count = rng.int(simBounds.burstPaymentsMin, simBounds.burstPaymentsMax);
  const withProjection = rng.chance(0.6) && ctx.projection;
  const killDrawn = rng.chance(0.2) ? rng.int(0, simBounds.killDelayMaxMs) : undefined;
  const killAfterMs = ctx.kills ? killDrawn : undefined;
  const amounts = Array.from({ length: count }, () => rng.int(1, simBounds.burstPaymentAmountMaxMinor));
  const balance = await entriesBalance(ctx, debtor);
  // Sized so that the burst asks for more than the balance: the funds check must say no to some.
  const floorMinor = Number((balance * 5n) / (4n * BigInt(count))) + 1;
  const intents = amounts.map((a) => newPayment(ctx, debtor, ctx.world.merchant, Math.max(a, floorMinor)));
  ctx.log(`burst of ${count} from ${debtor} (balance ${minorText(balance)}, asking ${minorText(intents.reduce((s, i) => s + BigInt(i.body.amount?.replace(".", "") ?? "0"), 0n))})${withProjection ? " with projection advances" : ""}${killAfterMs !== undefined ? `, kill -9 after ${killAfterMs} ms` : ""}`);
  let bursting = true;
  const projecting = withProjection ? (async () => {
    while (bursting) await advanceProjection(ctx.pool, ctx.world.tenantId).catch(() => undefined);
  })() : Promise.resolve();
  const burst = async () => {
    const sent = Promise.all(intents.map((intent) => sendPayment(ctx, intent)));
    if (killAfterMs !== undefined) {
      await new Promise((resolve) => setTimeout(resolve, killAfterMs));
      await ctx.service.kill9();
    }
    await sent;
    bursting = false;
    await projecting;
    if (killAfterMs !== undefined) await ctx.service.start();
  };
  // A burst with a kill is a fault window from its first request to the restart.
  if (killAfterMs !== undefined) return withFaultWindow(ctx.world, burst);
  const span = startSpan(ctx.world);
  await burst();
  if (!overlappedFault(ctx.world, span)) await checkBurstDeclines(ctx, debtor, intents);
}

/**
 * The burst's other half of the funds promise: the balance only fell during the burst, so a
 * payment declined for funds asked for more than what is left at its end. One that asked for less
 * was refused funds the account had.
 */
async function checkBurstDeclines(ctx: SimContext, debtor: string, intents: PaymentIntent[]): Promise<void> {
  const left = await entriesBalance(ctx, debtor);
  const wronglyDeclined = intents.filter((i) => i.told === "declined" && minorOf(i.body.amount ?? "0") <= left);
  for (const intent of wronglyDeclined) {
    broke(ctx.world, "shouldSucceedDid", `burst payment ${intent.clientReference} (step ${ctx.world.step})`,
      `applied: ${debtor} still holds ${minorText(left)} after the burst`, `declined for funds, asking ${intent.body.amount}`);
  }
}

function newRefund(ctx: SimContext, payment: PaymentIntent, amountMinor: number): RefundIntent {
  const { world } = ctx;
  const clientReference = `sim-${world.seed}-ref-${++world.counters.refund}`;
  const refund: RefundIntent = {
    clientReference, idempotencyKey: nextIdempotencyKey(world), told: "unknown",
    body: { client_reference: clientReference, payment_client_reference: payment.clientReference, amount: minorText(amountMinor) },
  };
  world.refunds.push(refund);
  return refund;
}

async function sendRefund(ctx: SimContext, refund: RefundIntent): Promise<void> {
  const outcome = await serviceCall(ctx, "POST", "/v1/refunds", refund.body, { "idempotency-key": refund.idempotencyKey });
  learnPayment(ctx.world, refund, outcome, "refund");
}

/** A refund of an earlier payment (some ask for more than is left); sometimes sent twice at once. */
export async function refund(ctx: SimContext): Promise<void> {
  const candidates = ctx.world.payments.filter((p) => !p.clientReference.includes("-fund-"));
  if (candidates.length === 0) return payNew(ctx);
  const payment = ctx.rng.pick(candidates);
  const paid = Number(payment.body.amount?.replace(".", "") ?? "1");
  const intent = newRefund(ctx, payment, ctx.rng.int(1, Math.max(1, Math.ceil(paid * 0.8))));
  const copies = ctx.rng.chance(0.3) ? 2 : 1;
  await Promise.all(Array.from({ length: copies }, () => sendRefund(ctx, intent)));
}

export async function refundRepeat(ctx: SimContext): Promise<void> {
  if (ctx.world.refunds.length === 0) return refund(ctx);
  await sendRefund(ctx, ctx.rng.pick(ctx.world.refunds));
}
