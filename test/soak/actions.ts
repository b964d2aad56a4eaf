import type { SimContext } from "../sim/context.ts";
import { serviceCall } from "../sim/http.ts";
import { minorText } from "../sim/money.ts";
import { covered, describeOutcome, expectSucceeded, startSpan } from "../sim/progress.ts";
import { nextIdempotencyKey } from "../sim/world.ts";

const outboundAmountMaxMinor = 3_000;   // like the sim's card requests: up to 30.00

/**
 * The soak's one action beyond the sim's: an authorization sent to the card scheme over serve's
 * outbound link (POST /v1/card-authorizations). The soak's scheme approves everything, so outside
 * a fault the answer is 201 approved; a link cut mid-exchange turns it into a reversal, which
 * must be acknowledged once the link is back (recovery.ts).
 */
export async function cardAuthorizationOutbound(ctx: SimContext): Promise<void> {
  const { world } = ctx;
  const card = ctx.rng.pick(world.cards);
  const idempotencyKey = nextIdempotencyKey(world);
  const body = { card: card.pan, amount: minorText(ctx.rng.int(1, outboundAmountMaxMinor)), currency: "USD", terminal: "SOAK0001", merchant: "SOAKMERCHANT001" };
  const span = startSpan(world);
  const outcome = await serviceCall(ctx, "POST", "/v1/card-authorizations", body, { "idempotency-key": idempotencyKey });
  const status: unknown = outcome.kind === "answer" ? outcome.json?.status : undefined;
  if (outcome.kind === "answer" && outcome.status === 201) covered(world, `outbound authorizations ${String(status)}`);
  const approved = outcome.kind === "answer" && outcome.status === 201 && status === "approved";
  expectSucceeded(world, `outbound authorization ${idempotencyKey}`, approved, `${describeOutcome(outcome)} ${String(status ?? "")}`.trim(), span, "the soak's scheme approves every authorization");
}

export const soakActions = {
  card_authorization_outbound: { weight: 6, run: cardAuthorizationOutbound },
} as const;
