import { Worker } from "node:worker_threads";
import type { Pool } from "../../src/db/pool.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import { openAccount } from "../../src/ledger/accounts.ts";
import { postTransfer } from "../../src/ledger/post-transfers.ts";

export interface LoadResult { opsPerSecond: number; latenciesMs: number[]; failure?: string }

export type LoadJob = {
  url: string; headers: Record<string, string>; bodies: string[]; keys: string[];
  concurrency: number; expectStatus: number; expectReplay: boolean;
};

export interface HttpLoader {
  load(job: LoadJob): Promise<LoadResult>;
  close(): Promise<number>;
}

/**
 * HTTP load from one worker thread that serves every load of the run, one at a time, so it runs
 * warm (bench/support/http-load-worker.mjs: a minimal keep-alive HTTP/1.1 client, decisions 0047,
 * 0054).
 */
export function httpLoader(): HttpLoader {
  const worker = new Worker(new URL("./http-load-worker.mjs", import.meta.url), { execArgv: [] });
  return {
    load: (job) => new Promise<LoadResult>((resolve, reject) => {
      const answered = (result: LoadResult) => {
        worker.off("error", failed);
        if (result.failure) reject(new Error(result.failure));
        else resolve(result);
      };
      const failed = (error: unknown) => {
        worker.off("message", answered);
        reject(error instanceof Error ? error : new Error(String(error)));
      };
      worker.once("message", answered);
      worker.once("error", failed);
      worker.postMessage(job);
    }),
    close: () => worker.terminate(),
  };
}

/** A settlement account, a merchant and `debtors` funded customers (payer-0 ...). */
export async function fundDebtors(pool: Pool, tenantId: string, debtors: number): Promise<void> {
  await withTransaction(pool, async (tx) => {
    const usd = { tenantId, currency: "USD" } as const;
    await openAccount(tx, { ...usd, accountId: "settlement", kind: "settlement" });
    await openAccount(tx, { ...usd, accountId: "merchant", kind: "customer" });
    for (let i = 0; i < debtors; i++) {
      await openAccount(tx, { ...usd, accountId: `payer-${i}`, kind: "customer" });
      await postTransfer(tx, {
        tenantId, transferKey: `fund-${i}`, kind: "funding", valueDate: "2026-12-02", legs: [
          { accountId: "settlement", direction: "D", amountMinor: 10n ** 12n, currency: "USD" },
          { accountId: `payer-${i}`, direction: "C", amountMinor: 10n ** 12n, currency: "USD" },
        ],
      });
    }
  });
}
