import { cardRequest, reversalOf } from "../../support/scheme-simulator.ts";
import { de, textField } from "../../../src/protocols/iso8583/index.ts";
import { identityOf, naturalKeyOf } from "../../../src/normalize/from-iso8583.ts";
import type { Message } from "../../../src/protocols/iso8583/index.ts";
import { simBounds } from "../bounds.ts";
import type { SimContext } from "../context.ts";
import { sawDedup, type IsoOriginal, type World } from "../world.ts";
import { broke, covered, expectSucceeded, overlappedFault, startSpan, type RequestSpan } from "../progress.ts";

/**
 * ISO 8583 over a real TCP socket to the service's scheme endpoint: authorizations (0100, a hold)
 * and financial requests (0200, a posting), their repeats (0101/0201) and retransmissions, and
 * reversals (0400, repeated as 0401). STAN and transmission time come from counters, so a seed
 * sends the same messages on every run.
 */
const usdNumeric = "840";
const systemMalfunction = "96";

function transmissionOf(stan: number): string {
  const seconds = stan % 86_400;
  const two = (n: number) => String(n).padStart(2, "0");
  return `1202${two(Math.floor(seconds / 3600))}${two(Math.floor(seconds / 60) % 60)}${two(seconds % 60)}`;
}

/** The service was up and the socket open: an unanswered request is a finding, not a fault we injected. */
function noAnswer(ctx: SimContext, message: Message, naturalKey: string, span: RequestSpan): void {
  if (overlappedFault(ctx.world, span)) return covered(ctx.world, "failures inside fault windows");
  const stan = textField(message, de.systemTraceAuditNumber) ?? "";
  ctx.world.isoUnanswered.push({ mti: message.mti, stan, naturalKey, step: ctx.world.step, strays: ctx.iso.strayAnswers() });
  ctx.log(`no answer to ${message.mti} STAN ${stan} (${naturalKey})`);
}

function nextStan(world: World): number {
  return ++world.counters.stan;
}

function newOriginal(ctx: SimContext, mti: "0100" | "0200"): IsoOriginal {
  const card = ctx.rng.pick(ctx.world.cards);
  const stan = nextStan(ctx.world);
  const amountMinor = ctx.rng.int(1, simBounds.isoAmountMaxMinor);
  const message = cardRequest({ mti, pan: card.pan, amountMinor: BigInt(amountMinor), currencyNumeric: usdNumeric, stan, transmission: transmissionOf(stan) });
  const identity = identityOf(message);
  if (!identity) throw new Error("a simulated card request has its identity fields");
  const naturalKey = naturalKeyOf(identity);
  const original: IsoOriginal = { message, naturalKey, effectKey: `${naturalKey}:${mti === "0100" ? "hold" : "posting"}`, accountId: card.accountId, amountMinor };
  ctx.world.isoOriginals.push(original);
  return original;
}

async function sendOriginal(ctx: SimContext, original: IsoOriginal, message: Message): Promise<string | undefined> {
  const answeredBefore = original.responseCode !== undefined;
  const span = startSpan(ctx.world);
  const response = await ctx.iso.request(message);
  if (!response) noAnswer(ctx, message, original.naturalKey, span);
  const code = response ? textField(response, de.responseCode) : undefined;
  ctx.world.observe?.("iso8583", code ?? "none", span);
  if (code === undefined) return undefined;
  // 96, system malfunction: nothing was committed (src/gateway/inbound-session.ts), so the outcome
  // is unknown, like a 5xx: no answer to remember, no dedup decision seen; outside a fault, a failure.
  if (code === systemMalfunction) {
    if (!overlappedFault(ctx.world, span)) {
      broke(ctx.world, "noFailureOutsideFaultWindow", `${message.mti} STAN ${textField(message, de.systemTraceAuditNumber) ?? ""} (step ${ctx.world.step})`, "an answer other than 96", "96 system malfunction");
    }
    return undefined;
  }
  if (original.responseCode === undefined) {
    original.responseCode = code;
    covered(ctx.world, code === "00" ? "card approvals" : "card declines");
  }
  // The record core records a repeat or a retransmission alike: a duplicate of the key (the MTI is in its position).
  if (answeredBefore) sawDedup(ctx.world, "iso8583", original.naturalKey, "duplicate");
  return code;
}

/** An account's balance from its entries alone: what the funds check must allow. */
async function entriesBalanceOf(ctx: SimContext, accountId: string): Promise<bigint> {
  const { rows } = await ctx.pool.query<{ balance: string }>(
    `SELECT (coalesce(sum(amount_minor) FILTER (WHERE direction = 'C'), 0) - coalesce(sum(amount_minor) FILTER (WHERE direction = 'D'), 0))::text AS balance
       FROM ledger_entry WHERE tenant_id = $1 AND account_id = $2`, [ctx.world.tenantId, accountId]);
  return BigInt(rows[0]?.balance ?? "0");
}

/** One card request on its own: when the card's account covers it, it must be approved (00). */
export async function isoAuthorize(ctx: SimContext): Promise<void> {
  const original = newOriginal(ctx, ctx.rng.chance(0.7) ? "0100" : "0200");
  const balance = await entriesBalanceOf(ctx, original.accountId);
  const span = startSpan(ctx.world);
  const code = await sendOriginal(ctx, original, original.message);
  if (balance < BigInt(original.amountMinor)) return;
  expectSucceeded(ctx.world, `card ${original.message.mti} ${original.naturalKey}`, code === "00", code === undefined ? "no answer" : `response code ${code}`, span,
    `${original.accountId} holds ${balance} minor units, it asks ${original.amountMinor}`);
}

/** A repeat (0101/0201) or a retransmission of the identical message: the stored answer, no second hold. */
export async function isoRepeat(ctx: SimContext): Promise<void> {
  if (ctx.world.isoOriginals.length === 0) return isoAuthorize(ctx);
  const original = ctx.rng.pick(ctx.world.isoOriginals);
  const asRepeat = ctx.rng.chance(0.5);
  const mti = asRepeat ? `${original.message.mti.slice(0, 3)}1` : original.message.mti;
  await sendOriginal(ctx, original, { ...original.message, mti });
}

/** Concurrent authorizations on one card: together more than the account holds. */
export async function isoBurst(ctx: SimContext): Promise<void> {
  const count = ctx.rng.int(2, simBounds.isoBurstMax);
  const originals = Array.from({ length: count }, () => newOriginal(ctx, "0100"));
  const span = startSpan(ctx.world);
  const codes = await Promise.all(originals.map((o) => sendOriginal(ctx, o, o.message)));
  if (overlappedFault(ctx.world, span)) return;
  // Holds only lower the balances during the burst: a decline for funds (51) of an amount that
  // the account still holds after the burst refused funds the account had.
  for (const [index, original] of originals.entries()) {
    if (codes[index] !== "51") continue;
    const left = await entriesBalanceOf(ctx, original.accountId);
    if (BigInt(original.amountMinor) > left) continue;
    broke(ctx.world, "shouldSucceedDid", `card burst ${original.naturalKey} (step ${ctx.world.step})`,
      `approved: ${original.accountId} still holds ${left} minor units after the burst`, `declined 51, asking ${original.amountMinor}`);
  }
}

export async function isoReverse(ctx: SimContext): Promise<void> {
  if (ctx.world.isoOriginals.length === 0) return isoAuthorize(ctx);
  const original = ctx.rng.pick(ctx.world.isoOriginals);
  const stan = nextStan(ctx.world);
  const message = reversalOf(original.message, { stan, transmission: transmissionOf(stan) });
  const reversal = { message, original, acknowledged: false };
  ctx.world.isoReversals.push(reversal);
  const times = ctx.rng.chance(0.3) ? 2 : 1;
  for (let i = 0; i < times; i++) {
    const span = startSpan(ctx.world);
    const response = await ctx.iso.request(i === 0 ? message : { ...message, mti: "0401" });
    if (!response) noAnswer(ctx, i === 0 ? message : { ...message, mti: "0401" }, `reversal-of:${original.naturalKey}`, span);
    const code = response ? textField(response, de.responseCode) : undefined;
    // A reversal is always acknowledged (00): of an approved original, a declined one, or an unknown one (an orphan).
    if (response) expectSucceeded(ctx.world, `reversal ${message.mti} of ${original.naturalKey}`, code === "00", `response code ${code ?? "none"}`, span, "a reversal is acknowledged");
    if (code === "00") {
      if (reversal.acknowledged) sawDedup(ctx.world, "iso8583", `reversal-of:${original.naturalKey}`, "repeat");
      else covered(ctx.world, "reversals acknowledged");
      reversal.acknowledged = true;
    }
  }
}
