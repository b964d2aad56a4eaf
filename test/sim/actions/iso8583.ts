import { cardRequest, reversalOf } from "../../support/scheme-simulator.ts";
import { de, textField } from "../../../src/protocols/iso8583/index.ts";
import { identityOf, naturalKeyOf } from "../../../src/normalize/from-iso8583.ts";
import type { Message } from "../../../src/protocols/iso8583/index.ts";
import { simBounds } from "../bounds.ts";
import type { SimContext } from "../context.ts";
import { sawDedup, type IsoOriginal, type World } from "../world.ts";

/**
 * ISO 8583 over a real TCP socket to the service's scheme endpoint: authorizations (0100, a hold)
 * and financial requests (0200, a posting), their repeats (0101/0201) and retransmissions, and
 * reversals (0400, repeated as 0401). STAN and transmission time come from counters, so a seed
 * sends the same messages on every run.
 */
const usdNumeric = "840";

function transmissionOf(stan: number): string {
  const seconds = stan % 86_400;
  const two = (n: number) => String(n).padStart(2, "0");
  return `1202${two(Math.floor(seconds / 3600))}${two(Math.floor(seconds / 60) % 60)}${two(seconds % 60)}`;
}

/** The service was up and the socket open: an unanswered request is a finding, not a fault we injected. */
function noAnswer(ctx: SimContext, message: Message, naturalKey: string): void {
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
  const message = cardRequest({ mti, pan: card.pan, amountMinor: BigInt(ctx.rng.int(1, simBounds.isoAmountMaxMinor)), currencyNumeric: usdNumeric, stan, transmission: transmissionOf(stan) });
  const identity = identityOf(message);
  if (!identity) throw new Error("a simulated card request has its identity fields");
  const naturalKey = naturalKeyOf(identity);
  const original: IsoOriginal = { message, naturalKey, effectKey: `${naturalKey}:${mti === "0100" ? "hold" : "posting"}` };
  ctx.world.isoOriginals.push(original);
  return original;
}

async function sendOriginal(ctx: SimContext, original: IsoOriginal, message: Message): Promise<void> {
  const answeredBefore = original.responseCode !== undefined;
  const response = await ctx.iso.request(message);
  if (!response) noAnswer(ctx, message, original.naturalKey);
  const code = response ? textField(response, de.responseCode) : undefined;
  if (code === undefined) return;
  if (original.responseCode === undefined) original.responseCode = code;
  // The record core records a repeat or a retransmission alike: a duplicate of the key (the MTI is in its position).
  if (answeredBefore) sawDedup(ctx.world, "iso8583", original.naturalKey, "duplicate");
}

export async function isoAuthorize(ctx: SimContext): Promise<void> {
  const original = newOriginal(ctx, ctx.rng.chance(0.7) ? "0100" : "0200");
  await sendOriginal(ctx, original, original.message);
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
  await Promise.all(originals.map((o) => sendOriginal(ctx, o, o.message)));
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
    const response = await ctx.iso.request(i === 0 ? message : { ...message, mti: "0401" });
    if (!response) noAnswer(ctx, i === 0 ? message : { ...message, mti: "0401" }, `reversal-of:${original.naturalKey}`);
    if (response && textField(response, de.responseCode) === "00") {
      if (reversal.acknowledged) sawDedup(ctx.world, "iso8583", `reversal-of:${original.naturalKey}`, "repeat");
      reversal.acknowledged = true;
    }
  }
}
