import { correctionOf, originalFile, reuploadOf } from "../ach-files.ts";
import type { SimContext } from "../context.ts";
import { serviceCall, type HttpOutcome } from "../http.ts";
import { covered, describeOutcome, expectSucceeded, startSpan, withFaultWindow } from "../progress.ts";
import { simBounds } from "../bounds.ts";
import { better, nextIdempotencyKey, sawDedup, type SimFile } from "../world.ts";

/**
 * ACH files over POST /v1/files with an Idempotency-Key: originals, identical re-uploads (same
 * key: a replay; new key and name: every record a duplicate) and corrections (changed, added and
 * dropped entries). What the file's report says was applied is what the client was told.
 */
export async function uploadFile(ctx: SimContext, file: SimFile): Promise<HttpOutcome> {
  const { world } = ctx;
  const outcome = await serviceCall(ctx, "POST", `/v1/files?name=${encodeURIComponent(file.name)}`, file.bytes, { "idempotency-key": file.idempotencyKey });
  if (outcome.kind === "unknown" || outcome.status >= 500 || outcome.status === 409) {
    if (outcome.kind === "answer" && outcome.status === 409) sawDedup(world, "http", file.idempotencyKey, "in_progress");
    file.told = better(file.told, "unknown");
    return outcome;
  }
  if (outcome.replayed) sawDedup(world, "http", file.idempotencyKey, "replayed");
  else if (outcome.status === 201 || outcome.status === 200) covered(world, file.correctionOf ? "corrections applied" : "files applied");
  if (outcome.status !== 201 && outcome.status !== 200) {
    file.told = better(file.told, "refused");
    ctx.log(`file ${file.name}: ${outcome.status} ${JSON.stringify(outcome.json)}`);
    return outcome;
  }
  world.answeredKeys.add(`POST /v1/files|${file.idempotencyKey}`);
  const fileId: string = outcome.json.file_id;
  file.fileId = fileId;
  file.told = "applied";
  // The per-record outcomes the operator reads: applied records are promises; duplicates and conflicts are dedup decisions.
  const shown = await serviceCall(ctx, "GET", `/v1/files/${fileId}`);
  if (shown.kind !== "answer" || shown.status !== 200) return outcome;
  const outcomes: Array<{ natural_key: string | null; outcome: string }> = shown.json.record_outcomes ?? [];
  file.reportedApplied = outcomes.filter((o) => o.outcome === "applied" && o.natural_key).map((o) => o.natural_key as string);
  if (!outcome.replayed) {
    for (const o of outcomes) {
      if (o.natural_key && (o.outcome === "duplicate" || o.outcome === "conflict" || o.outcome === "suspect")) sawDedup(world, "ach-file", `${fileId}|${o.natural_key}`, o.outcome);
    }
  }
  return outcome;
}

/** A valid file uploaded while no fault is open must be accepted (200 or 201). */
async function uploadExpectingSuccess(ctx: SimContext, file: SimFile): Promise<void> {
  const span = startSpan(ctx.world);
  const outcome = await uploadFile(ctx, file);
  const accepted = outcome.kind === "answer" && (outcome.status === 200 || outcome.status === 201);
  expectSucceeded(ctx.world, `file ${file.name}`, accepted, describeOutcome(outcome), span, "a valid ACH file");
}

/**
 * After an unknown outcome, the same upload with the same key until it is answered: a 409 (the
 * killed attempt's claim still in progress) is waited out, a bounded number of times.
 */
export async function uploadUntilAnswered(ctx: SimContext, file: SimFile): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const span = startSpan(ctx.world);
    const outcome = await uploadFile(ctx, file);
    const inProgress = outcome.kind === "answer" && outcome.status === 409;
    if (!inProgress || attempt >= simBounds.retryAttemptsMax) {
      const accepted = outcome.kind === "answer" && (outcome.status === 200 || outcome.status === 201);
      expectSucceeded(ctx.world, `file ${file.name} (retried ${attempt} time(s))`, accepted, describeOutcome(outcome), span, "a valid ACH file, asked again after its outcome was unknown");
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, simBounds.retryPauseMs));
  }
}

export async function fileOriginal(ctx: SimContext): Promise<void> {
  const file = originalFile(ctx.world, ctx.rng, nextIdempotencyKey(ctx.world));
  ctx.world.files.push(file);
  await uploadExpectingSuccess(ctx, file);
}

/** The same bytes again: with the same key (a client retry) or a new key and name (an operator's re-upload). */
export async function fileReupload(ctx: SimContext): Promise<void> {
  if (ctx.world.files.length === 0) return fileOriginal(ctx);
  const earlier = ctx.rng.pick(ctx.world.files);
  if (ctx.rng.chance(0.4)) return uploadExpectingSuccess(ctx, earlier);
  const copy = reuploadOf(ctx.world, earlier, nextIdempotencyKey(ctx.world));
  ctx.world.files.push(copy);
  await uploadExpectingSuccess(ctx, copy);
}

export async function fileCorrection(ctx: SimContext): Promise<void> {
  if (ctx.world.files.length === 0) return fileOriginal(ctx);
  const corrected = correctionOf(ctx.world, ctx.rng, ctx.rng.pick(ctx.world.files), nextIdempotencyKey(ctx.world));
  ctx.world.files.push(corrected);
  await uploadExpectingSuccess(ctx, corrected);
}

/** A file upload cut by kill -9 at a random moment, then retried with the same key after the restart (outcome unknown is resolved by asking again). */
export async function fileKilledMidUpload(ctx: SimContext): Promise<void> {
  if (!ctx.kills) return fileOriginal(ctx);
  const file = ctx.rng.chance(0.5) || ctx.world.files.length === 0
    ? originalFile(ctx.world, ctx.rng, nextIdempotencyKey(ctx.world))
    : correctionOf(ctx.world, ctx.rng, ctx.rng.pick(ctx.world.files), nextIdempotencyKey(ctx.world));
  ctx.world.files.push(file);
  const killAfterMs = ctx.rng.int(0, 150);
  await withFaultWindow(ctx.world, async () => {
    const uploading = uploadFile(ctx, file);
    await new Promise((resolve) => setTimeout(resolve, killAfterMs));
    await ctx.service.kill9();
    await uploading;
    await ctx.service.start();
  });
  if (file.told === "unknown") await uploadUntilAnswered(ctx, file);
}
