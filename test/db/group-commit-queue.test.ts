import { describe, expect, it } from "vitest";
import { GroupCommitQueue, type GroupCommitQueueBounds } from "../../src/db/group-commit-queue.ts";

interface Item { name: string; group: string; marks: string[] }

/** A queue whose batches finish only when the test says so, recording each batch's items. */
function queueOf(bounds: GroupCommitQueueBounds, startOnNextTurn = false) {
  const batches: string[][] = [];
  const finishers: Array<() => void> = [];
  const queue = new GroupCommitQueue<Item>({
    bounds, startOnNextTurn,
    marksOf: (item) => item.marks,
    sameBatch: (first, item) => first.group === item.group,
    runBatch: (batch) => {
      batches.push(batch.map((item) => item.name));
      return new Promise<void>((finish) => finishers.push(finish));
    },
  });
  const finishBatch = (i: number) => (finishers[i] as () => void)();
  return { queue, batches, finishBatch };
}

const item = (name: string, marks: string[] = [name], group = "t1"): Item => ({ name, group, marks });
const afterTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("the group-commit queue", () => {
  it("starts a lone item's batch at once, without waiting for company", () => {
    const { queue, batches } = queueOf({ batchItemsMax: 8, batchesInFlightMax: 1, queueMax: 8 });
    expect(queue.offer(item("a"))).toBe(true);
    expect(batches).toEqual([["a"]]);
    expect(queue.batchesInFlight).toBe(1);
  });

  it("sends the items that arrived while a batch ran together in the next batch, at most batchItemsMax", async () => {
    const { queue, batches, finishBatch } = queueOf({ batchItemsMax: 2, batchesInFlightMax: 1, queueMax: 8 });
    for (const name of ["a", "b", "c", "d"]) queue.offer(item(name));
    expect(queue.queued).toBe(3);
    finishBatch(0);
    await afterTurn();
    expect(batches).toEqual([["a"], ["b", "c"]]);
    expect(queue.queued).toBe(1);
  });

  it("holds back an item whose mark a batch in flight holds, and sends it after that batch ends", async () => {
    const { queue, batches, finishBatch } = queueOf({ batchItemsMax: 8, batchesInFlightMax: 2, queueMax: 8 });
    queue.offer(item("a", ["key-1"]));
    queue.offer(item("again", ["key-1"]));
    expect(batches).toEqual([["a"]]);
    expect(queue.queued).toBe(1);
    finishBatch(0);
    await afterTurn();
    expect(batches).toEqual([["a"], ["again"]]);
  });

  it("never puts two items with one mark, or of two groups, in one batch", async () => {
    const { queue, batches, finishBatch } = queueOf({ batchItemsMax: 8, batchesInFlightMax: 1, queueMax: 8 });
    queue.offer(item("first"));
    for (const next of [item("x", ["k"]), item("y", ["k"]), item("other-tenant", ["z"], "t2"), item("w", ["w"])]) queue.offer(next);
    finishBatch(0);
    await afterTurn();
    expect(batches[1]).toEqual(["x", "w"]);
    finishBatch(1);
    await afterTurn();
    expect(batches[2]).toEqual(["y"]);
    finishBatch(2);
    await afterTurn();
    expect(batches[3]).toEqual(["other-tenant"]);
  });

  it("refuses an item past queueMax, so that its caller runs alone", () => {
    const { queue } = queueOf({ batchItemsMax: 8, batchesInFlightMax: 1, queueMax: 2 });
    expect([1, 2, 3, 4].map((i) => queue.offer(item(`m${i}`)))).toEqual([true, true, true, false]);
  });

  it("with startOnNextTurn, lets every item offered in the same turn join one batch", async () => {
    const { queue, batches } = queueOf({ batchItemsMax: 8, batchesInFlightMax: 1, queueMax: 8 }, true);
    for (const name of ["a", "b", "c"]) queue.offer(item(name));
    expect(batches).toEqual([]);
    await afterTurn();
    expect(batches).toEqual([["a", "b", "c"]]);
  });
});
