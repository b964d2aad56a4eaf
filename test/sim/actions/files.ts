import { correctionOf, originalFile, reuploadOf } from "../ach-files.ts";
import type { SimContext } from "../context.ts";
import { httpCall } from "../http.ts";
import { better, nextIdempotencyKey, sawDedup, type SimFile } from "../world.ts";

/**
 * ACH files over POST /v1/files with an Idempotency-Key: originals, identical re-uploads (same
 * key: a replay; new key and name: every record a duplicate) and corrections (changed, added and
 * dropped entries). What the file's report says was applied is what the client was told.
 */
export async function uploadFile(ctx: SimContext, file: SimFile): Promise<void> {
  const { world } = ctx;
  const outcome = await httpCall(ctx.service.baseUrl, world.apiKey, "POST", `/v1/files?name=${encodeURIComponent(file.name)}`, file.bytes, { "idempotency-key": file.idempotencyKey });
  if (outcome.kind === "unknown" || outcome.status >= 500 || outcome.status === 409) {
    if (outcome.kind === "answer" && outcome.status === 409) sawDedup(world, "http", file.idempotencyKey, "in_progress");
    file.told = better(file.told, "unknown");
    return;
  }
  if (outcome.replayed) sawDedup(world, "http", file.idempotencyKey, "replayed");
  if (outcome.status !== 201 && outcome.status !== 200) {
    file.told = better(file.told, "refused");
    ctx.log(`file ${file.name}: ${outcome.status} ${JSON.stringify(outcome.json)}`);
    return;
  }
  world.answeredKeys.add(`POST /v1/files|${file.idempotencyKey}`);
  const fileId: string = outcome.json.file_id;
  file.fileId = fileId;
  file.told = "applied";
  // The per-record outcomes the operator reads: applied records are promises; duplicates and conflicts are dedup decisions.
  const shown = await httpCall(ctx.service.baseUrl, world.apiKey, "GET", `/v1/files/${fileId}`);
  if (shown.kind !== "answer" || shown.status !== 200) return;
  const outcomes: Array<{ natural_key: string | null; outcome: string }> = shown.json.record_outcomes ?? [];
  file.reportedApplied = outcomes.filter((o) => o.outcome === "applied" && o.natural_key).map((o) => o.natural_key as string);
  if (!outcome.replayed) {
    for (const o of outcomes) {
      if (o.natural_key && (o.outcome === "duplicate" || o.outcome === "conflict" || o.outcome === "suspect")) sawDedup(world, "ach-file", `${fileId}|${o.natural_key}`, o.outcome);
    }
  }
}

export async function fileOriginal(ctx: SimContext): Promise<void> {
  const file = originalFile(ctx.world, ctx.rng, nextIdempotencyKey(ctx.world));
  ctx.world.files.push(file);
  await uploadFile(ctx, file);
}

/** The same bytes again: with the same key (a client retry) or a new key and name (an operator's re-upload). */
export async function fileReupload(ctx: SimContext): Promise<void> {
  if (ctx.world.files.length === 0) return fileOriginal(ctx);
  const earlier = ctx.rng.pick(ctx.world.files);
  if (ctx.rng.chance(0.4)) return uploadFile(ctx, earlier);
  const copy = reuploadOf(ctx.world, earlier, nextIdempotencyKey(ctx.world));
  ctx.world.files.push(copy);
  await uploadFile(ctx, copy);
}

export async function fileCorrection(ctx: SimContext): Promise<void> {
  if (ctx.world.files.length === 0) return fileOriginal(ctx);
  const corrected = correctionOf(ctx.world, ctx.rng, ctx.rng.pick(ctx.world.files), nextIdempotencyKey(ctx.world));
  ctx.world.files.push(corrected);
  await uploadFile(ctx, corrected);
}

/** A file upload cut by kill -9 at a random moment, then retried with the same key after the restart (outcome unknown is resolved by asking again). */
export async function fileKilledMidUpload(ctx: SimContext): Promise<void> {
  const file = ctx.rng.chance(0.5) || ctx.world.files.length === 0
    ? originalFile(ctx.world, ctx.rng, nextIdempotencyKey(ctx.world))
    : correctionOf(ctx.world, ctx.rng, ctx.rng.pick(ctx.world.files), nextIdempotencyKey(ctx.world));
  ctx.world.files.push(file);
  const killAfterMs = ctx.rng.int(0, 150);
  const uploading = uploadFile(ctx, file);
  await new Promise((resolve) => setTimeout(resolve, killAfterMs));
  await ctx.service.kill9();
  await uploading;
  await ctx.service.start();
  if (file.told === "unknown") await uploadFile(ctx, file);
}
