import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { failureReason, repeatedFailureLog } from "../../src/observability/repeated-failure-log.ts";

interface Line { level: number; msg: string; attempts?: number; attemptsTotal?: number; reason?: string }

/** A logger whose lines are kept, and a way to wait for the next one (the event, not a delay). */
function capturedLogger() {
  const lines: Line[] = [];
  const waiters: Array<() => void> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString().split("\n").filter((l) => l !== "")) lines.push(JSON.parse(text) as Line);
      for (const wake of waiters.splice(0)) wake();
      done();
    },
  });
  const logger = pino({ level: "info" }, destination);
  const lineCount = async (count: number) => {
    while (lines.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return { logger, lines, lineCount };
}

const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5999"), { code: "ECONNREFUSED" });

describe("a repeated failure logged with counts", () => {
  it("logs the first failure at once and a thousand more in one line with their count", async () => {
    const { logger, lines, lineCount } = capturedLogger();
    const log = repeatedFailureLog(logger, "database unreachable", { intervalMs: 200 });
    for (let attempt = 0; attempt < 1_001; attempt++) log.failed(refused);
    expect(lines.map((l) => l.msg)).toEqual(["database unreachable: ECONNREFUSED"]);
    await lineCount(2);
    expect(lines[1]).toMatchObject({
      msg: "database unreachable, 1000 attempts in the last 0.2 s: ECONNREFUSED", attempts: 1_000, attemptsTotal: 1_001,
    });
    log.succeeded();
    await lineCount(3);
    expect(lines[2]?.msg).toMatch(/^database unreachable: over after 1001 failed attempts in [\d.]+ s$/);
    expect(lines[2]?.attemptsTotal).toBe(1_001);
    expect(lines).toHaveLength(3);
    log.close();
  });

  it("bounds the lines of an outage by its intervals, not by its attempts", async () => {
    const { logger, lines, lineCount } = capturedLogger();
    const log = repeatedFailureLog(logger, "outbox relay pass failed", { intervalMs: 100 });
    let attempts = 0;
    // Five intervals of failures at the rate of a busy loop.
    const started = Date.now();
    while (lines.length < 6) {
      log.failed(refused);
      attempts++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const intervals = (Date.now() - started) / 100;
    log.succeeded();
    await lineCount(7);
    expect(attempts).toBeGreaterThan(lines.length * 10);
    expect(lines.length).toBeLessThanOrEqual(Math.ceil(intervals) + 2);
    const counted = lines.slice(1, -1).reduce((sum, line) => sum + (line.attempts ?? 0), 1);
    expect(counted).toBeLessThanOrEqual(attempts);
    expect(lines.at(-1)?.attemptsTotal).toBe(attempts);
    log.close();
  });

  it("ends a quiet episode without a success, so the next failure is logged at once", async () => {
    const { logger, lines, lineCount } = capturedLogger();
    const log = repeatedFailureLog(logger, "drop folder scan failed", { intervalMs: 50 });
    log.failed(refused);
    await lineCount(1);
    while (log.failing() !== undefined) await new Promise((resolve) => setTimeout(resolve, 10));
    log.failed(new Error("EACCES: permission denied"));
    expect(lines.map((l) => l.msg)).toEqual([
      "drop folder scan failed: ECONNREFUSED", "drop folder scan failed: EACCES: permission denied",
    ]);
    log.close();
  });

  it("names a failure by its code, else its message", () => {
    expect(failureReason(refused)).toBe("ECONNREFUSED");
    expect(failureReason(Object.assign(new Error("terminating connection"), { code: "57P01" }))).toBe("57P01");
    expect(failureReason(new AggregateError([refused], ""))).toBe("ECONNREFUSED");
    expect(failureReason(new Error("Connection terminated unexpectedly"))).toBe("Connection terminated unexpectedly");
  });
});
