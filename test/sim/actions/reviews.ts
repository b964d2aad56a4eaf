import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { simBounds } from "../bounds.ts";
import type { SimContext } from "../context.ts";
import { serviceCall } from "../http.ts";
import { describeOutcome, expectSucceeded, startSpan } from "../progress.ts";
import { nextIdempotencyKey, sawDedup, type Told } from "../world.ts";
import { fileCorrection } from "./files.ts";

const BIN = fileURLToPath(new URL("../../../src/cli/clearline.mjs", import.meta.url));

export type ReviewDecision = "replace" | "apply_as_new" | "refuse";

/**
 * Which way a decision reaches the service: "http" (default), POST /v1/reviews/{id}/decision with
 * an Idempotency-Key, as the console does; "cli", `clearline review replace|apply-as-new|refuse`.
 * CLEARLINE_SIM_REVIEW_ROUTE picks one. (Before issue 10 the only decision was `review release`,
 * which posted a correction next to its original: the double posting this simulation found.)
 */
export const reviewRoute: "cli" | "http" = process.env.CLEARLINE_SIM_REVIEW_ROUTE === "cli" ? "cli" : "http";
const cliVerbs: Record<ReviewDecision, string> = { replace: "replace", apply_as_new: "apply-as-new", refuse: "refuse" };

/**
 * Answers other than 200 an open review may legitimately get: its posting would overdraw, or the
 * decision does not fit it. The API sends catalog codes in lower case (src/errors/problem.ts);
 * compared in upper case, a refusal for funds once counted as a failure (CI soak, seed 31).
 */
const reviewRefusalsExpected = ["REVIEW_INSUFFICIENT_FUNDS", "REVIEW_NOT_APPLICABLE"]
  .map((code) => code.toLowerCase());

/** THE one function every review decision of the simulation goes through. */
export async function decideReview(ctx: SimContext, reviewId: string, decision: ReviewDecision, reason: string, idempotencyKey: string): Promise<Told> {
  if (reviewRoute === "http") {
    const span = startSpan(ctx.world);
    const outcome = await serviceCall(ctx, "POST", `/v1/reviews/${encodeURIComponent(reviewId)}/decision`,
      { decision, reason, operator: `sim-${ctx.world.seed}` }, { "idempotency-key": idempotencyKey });
    // An open review is decided (200), or refused for a reason of the ledger's: nothing else.
    const code: unknown = outcome.kind === "answer" ? outcome.json?.code : undefined;
    const decided = outcome.kind === "answer" && (outcome.status === 200 || outcome.status === 201
      || (typeof code === "string" && reviewRefusalsExpected.includes(code)));
    expectSucceeded(ctx.world, `review ${decision} ${reviewId}`, decided, describeOutcome(outcome), span, "an open review, decided by an operator");
    if (outcome.kind === "unknown" || outcome.status >= 500) return "unknown";
    if (outcome.replayed) sawDedup(ctx.world, "http", idempotencyKey, "replayed");
    return outcome.status === 200 || outcome.status === 201 ? "applied" : "refused";
  }
  const verb = cliVerbs[decision];
  const run = await new Promise<{ code: number; output: string }>((resolve) => {
    execFile(process.execPath, [BIN, "review", verb, reviewId, "--reason", reason, "--tenant", ctx.world.tenantId, "--json"], {
      env: { ...process.env, DATABASE_URL: ctx.service.databaseUrl, CLEARLINE_HOME: ctx.service.home, CLEARLINE_LOG_LEVEL: "warn" }, timeout: simBounds.requestTimeoutMs,
    }, (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, output: `${stdout}${stderr}` }));
  });
  if (run.code !== 0) ctx.log(`review ${verb} ${reviewId}: exit ${run.code} ${run.output.trim()}`);
  return run.code === 0 ? "applied" : "refused";
}

/** An operator decides one open conflict (sometimes twice: a repeat must do nothing more). */
export async function reviewDecide(ctx: SimContext): Promise<void> {
  const { rows } = await ctx.pool.query<{ review_id: string; natural_key: string }>(
    `SELECT review_id, natural_key FROM record_review WHERE tenant_id = $1 AND state = 'open'
       ORDER BY natural_key, review_id`, [ctx.world.tenantId]);
  if (rows.length === 0) return fileCorrection(ctx);
  const item = ctx.rng.pick(rows);
  const decision = ctx.rng.weighted<ReviewDecision>({ replace: 3, apply_as_new: 1, refuse: 1 });
  const times = ctx.rng.chance(0.25) ? 2 : 1;
  const idempotencyKey = nextIdempotencyKey(ctx.world);
  for (let i = 0; i < times; i++) {
    const told = await decideReview(ctx, item.review_id, decision, `sim ${ctx.world.seed}: partner confirmed (${decision})`, idempotencyKey);
    ctx.log(`review ${decision} ${item.review_id} (${item.natural_key}): ${told}`);
    if (told === "applied" && i === 0) {
      sawDedup(ctx.world, "review", item.review_id, "*");
      if (decision === "apply_as_new") ctx.world.applyAsNewByKey.set(item.natural_key, (ctx.world.applyAsNewByKey.get(item.natural_key) ?? 0) + 1);
    }
  }
}
