import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { assert } from "../src/assert.ts";
import { frameMessage, iso87AsciiDictionary, pack, unpack, type Message } from "../src/protocols/iso8583/index.ts";
import { randomBytes } from "node:crypto";
import { CardKeys } from "../src/cards/card-key.ts";
import { addCard, withLuhnCheckDigit } from "../src/cards/cards.ts";
import { limits } from "../src/config/limits.ts";
import { withTransaction } from "../src/db/transaction.ts";
import { handleInbound } from "../src/gateway/inbound.ts";
import { startInboundEndpoint } from "../src/gateway/inbound-endpoint.ts";
import { cardRequest, networkRequest, SchemeClient } from "../src/gateway/scheme-simulator.ts";
import { openAccount } from "../src/ledger/accounts.ts";
import { advanceProjection } from "../src/ledger/balance.ts";
import { postTransfer } from "../src/ledger/post-transfers.ts";
import { createLogger } from "../src/observability/logger.ts";
import { createTenant } from "../src/tenants/tenants.ts";
import { percentile, ratioRow, throughput, type BenchReport, type BenchRow, type Benchmark } from "./harness.ts";
import { benchDatabase } from "./support/database.ts";

/**
 * `npm run bench -- iso8583`. Sections run one after another in the same process and report
 * rows against a baseline measured in the same run. Section 1: the codec against the npm
 * `iso_8583` package. (The endpoint section, authorizations/s through the TCP endpoint against
 * the same database transaction issued directly, is endpointSection below.)
 */

interface BaselineCodec {
  getBufferMessage(): Buffer | { error: string };
  getIsoJSON(buffer: Buffer): Record<string, string> | { error: string };
}
type BaselineConstructor = new (data?: Record<string, string>) => BaselineCodec;

const require = createRequire(import.meta.url);
const fixture = JSON.parse(readFileSync(new URL("../fixtures/iso8583/0100-authorization-request.json", import.meta.url), "utf8")) as {
  expected: Message & { fields: Record<string, string> };
};

const measureMs = 1_500;   // per timed round: long enough to swamp timer noise, short enough for CI
const rounds = 3;          // best of three, alternating sides, so a GC pause or a noisy neighbour hurts neither side alone

/** Messages per second of `operation`, best of `rounds` rounds of about measureMs each. */
function messagesPerSecond(operation: () => void): number {
  for (let i = 0; i < 2_000; i++) operation(); // warm-up: let the JIT settle before timing
  let best = 0;
  for (let round = 0; round < rounds; round++) {
    let count = 0;
    const started = process.hrtime.bigint();
    const deadline = started + BigInt(measureMs) * 1_000_000n;
    let now = started;
    while (now < deadline) {
      for (let i = 0; i < 200; i++) operation();
      count += 200;
      now = process.hrtime.bigint();
    }
    best = Math.max(best, count / (Number(now - started) / 1e9));
  }
  return best;
}

function codecSection(): { rows: BenchRow[]; notes: string[] } {
  const message: Message = fixture.expected;
  const Baseline = require("iso_8583") as BaselineConstructor;
  const baselineData = { 0: message.mti, ...fixture.expected.fields };

  // Both sides must round-trip the message before their speed means anything.
  const ours = pack(message, iso87AsciiDictionary);
  assert(ours.ok, "our codec packs the benchmark 0100");
  const reread = unpack(ours.value, iso87AsciiDictionary);
  assert(reread.ok && reread.value.fields[2] === message.fields[2], "our codec unpacks the benchmark 0100");
  const theirs = new Baseline(baselineData).getBufferMessage();
  assert(Buffer.isBuffer(theirs), "iso_8583 packs the benchmark 0100");
  const theirsBack = new Baseline().getIsoJSON(theirs);
  assert(!("error" in theirsBack) && theirsBack["2"] === message.fields[2], "iso_8583 unpacks the benchmark 0100");

  // Ours: pack, frame with the 2-byte length (as iso_8583's getBufferMessage does), unpack the body.
  const oursOperation = () => {
    const packed = pack(message, iso87AsciiDictionary);
    if (!packed.ok) throw new Error(packed.error.code);
    const framed = frameMessage(packed.value);
    if (!framed.ok) throw new Error(framed.error.code);
    const read = unpack(framed.value.subarray(2), iso87AsciiDictionary);
    if (!read.ok) throw new Error(read.error.code);
  };
  const baselineOperation = () => {
    const buffer = new Baseline(baselineData).getBufferMessage();
    if (!Buffer.isBuffer(buffer)) throw new Error(buffer.error);
    new Baseline().getIsoJSON(buffer);
  };

  let oursRate = 0;
  let baselineRate = 0;
  for (let pass = 0; pass < 2; pass++) {
    baselineRate = Math.max(baselineRate, messagesPerSecond(baselineOperation));
    oursRate = Math.max(oursRate, messagesPerSecond(oursOperation));
  }
  return {
    rows: [ratioRow({
      case: "codec pack+frame+unpack, typical 0100 (19 fields, ISO 8583:1987 ASCII)",
      value: oursRate, unit: "messages/s", baseline: baselineRate, baselineCase: "npm iso_8583 getBufferMessage+getIsoJSON", goal: ">= 10",
    })],
    notes: [`message: ${ours.value.length} bytes with our hex bitmap, ${theirs.length - 2} bytes from iso_8583; both sides checked to round-trip the PAN before timing`],
  };
}

/**
 * Section 2: authorizations per second through the TCP endpoint (frame, unpack, decide, commit,
 * pack, write) with 64 in flight on one connection, against the same decision transaction
 * (handleInbound) called directly with 64 in flight, in the same run on the same database. Cards
 * are spread over accounts so that the account lock of the funds check is not the only thing
 * measured.
 */
async function endpointSection(args: string[]): Promise<{ rows: BenchRow[]; notes: string[] }> {
  const authorizations = Number(args.find((a) => a.startsWith("--authorizations="))?.split("=")[1] ?? 2_000);
  const inflight = 64;
  const accounts = 16;
  const database = await benchDatabase(20);
  const logger = createLogger({ level: "silent" });
  const keys = new CardKeys(randomBytes(32));
  try {
    const tenant = await createTenant(database.pool, "bench-issuer");
    assert(tenant.ok, "bench tenant created");
    const tenantId = tenant.value.tenantId;
    const pans: string[] = [];
    await withTransaction(database.pool, async (tx) => {
      assert((await openAccount(tx, { tenantId, accountId: "bank", kind: "settlement", currency: "EUR" })).ok, "bank account opened");
      for (let i = 0; i < accounts; i++) {
        const accountId = `cust-${i}`;
        assert((await openAccount(tx, { tenantId, accountId, kind: "customer", currency: "EUR" })).ok, "customer account opened");
        const funded = await postTransfer(tx, {
          tenantId, transferKey: `fund-${i}`, kind: "funding", valueDate: "2026-12-01",
          legs: [{ accountId: "bank", direction: "D", amountMinor: 10n ** 12n, currency: "EUR" }, { accountId, direction: "C", amountMinor: 10n ** 12n, currency: "EUR" }],
        });
        assert(funded.ok, "customer funded");
        const pan = withLuhnCheckDigit(`4999${String(i).padStart(11, "0")}`);
        assert((await addCard(tx, keys, { tenantId, pan, accountId })).ok, "card added");
        pans.push(pan);
      }
    });
    const requestOf = (side: number, i: number) =>
      cardRequest({ pan: pans[i % accounts] as string, amountMinor: 100n, stan: side * 100_000 + i + 1, transmission: "1201120000", terminal: `BENCH00${side}` });

    const deps = { pool: database.pool, keys };
    // Each side starts from a folded balance projection (the service advances it every few seconds).
    await advanceProjection(database.pool, tenantId);
    const direct = await throughput(authorizations, inflight, async (i) => {
      const result = await handleInbound(deps, requestOf(1, i), { connection: "bench-direct" });
      assert(result.response?.fields[39] === "00", "direct authorization approved");
    });

    const codec = { dictionary: iso87AsciiDictionary, framing: "binary-2" as const, frameBytesMax: limits.iso8583.frameBytesMax };
    const endpoint = await startInboundEndpoint({ ...deps, logger }, {
      host: "127.0.0.1", port: 0, codec, connectionsMax: limits.iso8583.inboundConnectionsMax,
      inflightPerConnectionMax: limits.iso8583.inboundInflightPerConnectionMax, idleTimeoutMs: limits.iso8583.inboundIdleTimeoutMs,
    });
    const client = await SchemeClient.connect("127.0.0.1", endpoint.port, codec);
    await client.request(networkRequest("001", 1));   // the endpoint answers financial messages only after sign-on
    await advanceProjection(database.pool, tenantId);
    let overTcp;
    try {
      overTcp = await throughput(authorizations, inflight, async (i) => {
        const response = await client.request(requestOf(2, i));
        assert(response.fields[39] === "00", "endpoint authorization approved");
      });
    } finally {
      await client.close();
      await endpoint.close();
    }
    return {
      rows: [ratioRow({
        case: `authorizations through the TCP endpoint, ${inflight} in flight on one connection`,
        value: overTcp.opsPerSecond, unit: "authorizations/s", baseline: direct.opsPerSecond,
        baselineCase: `handleInbound called directly, ${inflight} in flight`,
      })],
      notes: [
        `${authorizations} approved 0100s per side over ${accounts} funded accounts; p99 ${percentile(overTcp.latenciesMs, 99).toFixed(1)} ms through the endpoint, ${percentile(direct.latenciesMs, 99).toFixed(1)} ms direct`,
      ],
    };
  } finally {
    await database.close();
  }
}


export const run: Benchmark = async (args) => {
  const report: BenchReport = { name: "iso8583", rows: [], notes: [] };
  const codec = codecSection();
  report.rows.push(...codec.rows);
  report.notes?.push(...codec.notes);
  const endpoint = await endpointSection(args);
  report.rows.push(...endpoint.rows);
  report.notes?.push(...endpoint.notes);
  return report;
};
