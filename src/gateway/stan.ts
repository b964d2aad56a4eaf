import type { SchemeLinkStore } from "../cards/index.ts";

/**
 * System trace audit numbers (DE 11) for one connection: unique per day and connection, wrapping
 * from 999999 to 000001. Numbers come from a database counter in blocks (one write per block),
 * so a restart never reuses a number handed out before it; the unused rest of a block is skipped.
 * The counter is kept by the card-messages service (iso8583_stan_counter).
 */
export const stanMax = 999_999;

export class StanAllocator {
  private nextValue = 0n;
  private blockEnd = 0n;
  private refilling: Promise<void> | undefined;

  constructor(
    private readonly counter: Pick<SchemeLinkStore, "reserveStans">,
    private readonly connection: string,
    private readonly blockSize: number,
  ) {}

  async next(): Promise<string> {
    while (this.nextValue === 0n || this.nextValue > this.blockEnd) {
      this.refilling ??= this.refill().finally(() => {
        this.refilling = undefined;
      });
      await this.refilling;
    }
    const value = this.nextValue++;
    return stanOf(value);
  }

  private async refill(): Promise<void> {
    const allocated = await this.counter.reserveStans(this.connection, this.blockSize);
    this.nextValue = allocated - BigInt(this.blockSize) + 1n;
    this.blockEnd = allocated;
  }
}

/** The n-th number of the counter (1-based) as a STAN: 1..999999, then 1 again. */
export function stanOf(counter: bigint): string {
  return String(((counter - 1n) % BigInt(stanMax)) + 1n).padStart(6, "0");
}
