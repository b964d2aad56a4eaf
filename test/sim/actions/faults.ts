import { advanceProjection } from "../../../src/ledger/balance.ts";
import type { SimContext } from "../context.ts";
import { withFaultWindow } from "../progress.ts";

/** kill -9 of the service between requests, then a restart on the same database and home. */
export async function killRestart(ctx: SimContext): Promise<void> {
  if (!ctx.kills) return projectionAdvance(ctx);
  await withFaultWindow(ctx.world, async () => {
    await ctx.service.kill9();
    await ctx.service.start();
  });
}

/** A projection advance from outside the service (the service's own job runs every 100 ms besides). */
export async function projectionAdvance(ctx: SimContext): Promise<void> {
  if (ctx.projection) await advanceProjection(ctx.pool, ctx.world.tenantId);
}
