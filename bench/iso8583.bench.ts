import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { assert } from "../src/assert.ts";
import { de, frameMessage, iso87AsciiDictionary, pack, storableFields, textField, unpack, type Message } from "../src/protocols/iso8583/index.ts";
import { randomBytes } from "node:crypto";
import { CardKeys } from "../src/cards/card-key.ts";
import { addCard, withLuhnCheckDigit } from "../src/cards/cards.ts";
import { limits } from "../src/config/limits.ts";
import { withTransaction } from "../src/db/transaction.ts";
import { cardIssuer, handleInbound } from "../src/cards/inbound.ts";
import { startInboundEndpoint } from "../src/gateway/inbound-endpoint.ts";
import { cardRequest, networkRequest, SchemeClient } from "../test/support/scheme-simulator.ts";
import { openAccount } from "../src/ledger/accounts.ts";
import { advanceProjection } from "../src/ledger/balance.ts";
import { postTransfers } from "../src/ledger/post-transfers.ts";
import { createLogger } from "../src/observability/logger.ts";
import { iso8583OriginalBatches } from "../src/observability/metrics-gateway.ts";
import { createTenant } from "../src/tenants/tenants.ts";
import { alternate, percentile, roundsRow, throughput, type BenchReport, type BenchRow, type Benchmark } from "./harness.ts";
import { benchDatabase, type BenchDatabase } from "./support/database.ts";
import { rawAuthorization, type RawAuthorization } from "./support/raw-authorization.ts";
import { approvalCodeOf, buildResponse } from "../src/cards/messages.ts";
import { identityOf, naturalKeyOf, originalFingerprintOf } from "../src/normalize/from-iso8583.ts";

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

const measureMs = 1_000;   // per timed window: long enough to swamp timer noise, short enough for CI
const codecRounds = 5;     // baseline and ours alternate (B A B A ...), so load that drifts hits both sides alike

/** Messages per second of `operation` over one window of about measureMs (the caller warms it up). */
function messagesPerSecond(operation: () => void): number {
  let count = 0;
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(measureMs) * 1_000_000n;
  let now = started;
  while (now < deadline) {
    for (let i = 0; i < 200; i++) operation();
    count += 200;
    now = process.hrtime.bigint();
  }
  return count / (Number(now - started) / 1e9);
}

async function codecSection(): Promise<{ rows: BenchRow[]; notes: string[] }> {
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

  // Warm both up before the first timed window: let the JIT settle on each side.
  for (let i = 0; i < 5_000; i++) { baselineOperation(); oursOperation(); }
  const rounds = await alternate(codecRounds, async () => messagesPerSecond(baselineOperation), async () => messagesPerSecond(oursOperation));
  return {
    rows: [roundsRow(`codec pack+frame+unpack, typical 0100 (${Object.keys(message.fields).length} data fields, ISO 8583:1987 ASCII), interleaved`, "messages/s",
      "npm iso_8583 getBufferMessage+getIsoJSON", rounds, ">= 10")],
    notes: [`message: ${ours.value.length} bytes with our hex bitmap, ${theirs.length - 2} bytes from iso_8583; both sides checked to round-trip the PAN before timing`],
  };
}

/**
 * Section 2: authorizations per second through the TCP endpoint (frame, unpack, decide, commit,
 * pack, write) with 64 in flight on one connection, against the raw minimum of the same database
 * work written by hand (support/raw-authorization.ts: one transaction per message, 64 in flight),
 * alternated in rounds on the same database. 1,000 cards, each on its own funded account, so the
 * account lock of the funds check is not the only thing measured.
 */
const cards = 1_000;
const inflight = 64;
const endpointRounds = 3;

async function givenCards(pool: BenchDatabase["pool"], keys: CardKeys): Promise<{ tenantId: string; pans: string[] }> {
  const tenant = await createTenant(pool, "bench-issuer");
  assert(tenant.ok, "bench tenant created");
  const tenantId = tenant.value.tenantId;
  const pans: string[] = [];
  await withTransaction(pool, async (tx) => {
    assert((await openAccount(tx, { tenantId, accountId: "bank", kind: "settlement", currency: "EUR" })).ok, "bank account opened");
    for (let i = 0; i < cards; i++) {
      assert((await openAccount(tx, { tenantId, accountId: `cust-${i}`, kind: "customer", currency: "EUR" })).ok, "customer account opened");
    }
    const funded = await postTransfers(tx, Array.from({ length: cards }, (_, i) => ({ transfer: {
      tenantId, transferKey: `fund-${i}`, kind: "funding", valueDate: "2026-12-01",
      legs: [{ accountId: "bank", direction: "D" as const, amountMinor: 10n ** 12n, currency: "EUR" }, { accountId: `cust-${i}`, direction: "C" as const, amountMinor: 10n ** 12n, currency: "EUR" }],
    } })));
    assert(funded.every((r) => r.outcome.ok), "customers funded");
    for (let i = 0; i < cards; i++) {
      const pan = withLuhnCheckDigit(`4999${String(i).padStart(11, "0")}`);
      assert((await addCard(tx, keys, { tenantId, pan, accountId: `cust-${i}` })).ok, "card added");
      pans.push(pan);
    }
  });
  return { tenantId, pans };
}

/** What the raw transaction needs, computed from the message before the clock starts. */
function rawOf(keys: CardKeys, tenantId: string, message: Message): RawAuthorization {
  const identity = identityOf(message);
  const pan = textField(message, de.primaryAccountNumber);
  assert(identity !== undefined && pan !== undefined, "bench 0100 has its identity and PAN");
  const naturalKey = naturalKeyOf(identity);
  const cardHash = keys.cardHash(tenantId, pan);
  const amountMinor = BigInt(textField(message, de.amountTransaction) ?? "0");
  const approval = { [de.authorizationIdentificationResponse]: approvalCodeOf(naturalKey) };
  const response = buildResponse(message, "approved", approval);
  return {
    tenantId, cardHash, naturalKey, rrn: textField(message, de.retrievalReferenceNumber) ?? "", mti: message.mti,
    fingerprint: originalFingerprintOf({ mtiClass: identity.mtiClass, cardHash, amountMinor, currency: "EUR", transactionType: "00" }), amountMinor, currency: "EUR",
    responseMti: response.mti, responseFields: storableFields(response), valueDate: new Date().toISOString().slice(0, 10), connection: "bench-raw",
  };
}

/** The baseline makes the same rows as the handler: one message each way on the same card, compared column by column. */
async function assertSameRows(database: BenchDatabase, keys: CardKeys, tenantId: string, requestOf: (stan: number) => Message): Promise<void> {
  const byHandler = requestOf(998_998);   // two STANs on the same card (stan % cards)
  const byHand = requestOf(999_998);
  const handled = await handleInbound({ pool: database.pool, keys }, byHandler, { connection: "bench-raw" });
  assert(handled.response?.fields[39] === "00", "handler approves the check message");
  const raw = rawOf(keys, tenantId, byHand);
  await withTransaction(database.pool, (tx) => rawAuthorization(tx, raw));
  const rowsOf = async (message: Message) => {
    const naturalKey = naturalKeyOf(identityOf(message) as NonNullable<ReturnType<typeof identityOf>>);
    const { rows } = await database.pool.query(
      `SELECT i.mti_class, i.mti, i.card_hash, i.account_id, i.amount_minor::text, i.currency, i.outcome, i.response_code, i.response_mti, i.connection,
              i.effect_key = $2 || ':hold' AS effect_is_hold, (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(i.response_fields) k) AS response_field_numbers,
              t.kind, t.value_date::text, t.source_ref = 'iso8583:' || i.mti || ':' || $2 AS source_ref_matches,
              (SELECT json_agg(json_build_array(e.entry_key = i.effect_key || '#' || (CASE e.direction WHEN 'D' THEN 0 ELSE 1 END), e.account_id, e.direction, e.amount_minor::text, e.currency, e.value_date) ORDER BY e.direction DESC)
                 FROM ledger_entry e WHERE e.tenant_id = i.tenant_id AND e.transfer_key = i.effect_key) AS entries
         FROM iso8583_inbound i JOIN transfer t ON t.tenant_id = i.tenant_id AND t.transfer_key = i.effect_key
        WHERE i.tenant_id = $1 AND i.natural_key = $2`,
      [tenantId, naturalKey],
    );
    return JSON.stringify(rows);
  };
  const [handlerRows, rawRows] = [await rowsOf(byHandler), await rowsOf(byHand)];
  assert(handlerRows === rawRows && handlerRows !== "[]", `baseline rows differ from the handler's:\n${handlerRows}\n${rawRows}`);
}

/** Group-commit transactions of originals so far, by outcome. */
async function batchCounts(): Promise<{ committed: number; fallback: number }> {
  const values = (await iso8583OriginalBatches.get()).values;
  const of = (outcome: string) => values.filter((v) => v.labels.outcome === outcome).reduce((sum, v) => sum + v.value, 0);
  return { committed: of("committed"), fallback: of("fallback") };
}

async function endpointSection(args: string[]): Promise<{ rows: BenchRow[]; notes: string[] }> {
  const authorizations = Number(args.find((a) => a.startsWith("--authorizations="))?.split("=")[1] ?? 1_000);
  assert(authorizations * 2 * endpointRounds < 998_998, "STANs stay within six digits, below the check messages");
  const database = await benchDatabase(20);
  const logger = createLogger({ level: "silent" });
  const keys = new CardKeys(randomBytes(32));
  try {
    const { tenantId, pans } = await givenCards(database.pool, keys);
    const requestOf = (stan: number) =>
      cardRequest({ pan: pans[stan % cards] as string, amountMinor: 100n, stan, transmission: "1201120000", terminal: "BENCH001" });
    const stanOf = (round: number, side: number, i: number) => 1 + (round * 2 + side) * authorizations + i;
    await assertSameRows(database, keys, tenantId, requestOf);

    const codec = { dictionary: iso87AsciiDictionary, framing: "binary-2" as const, frameBytesMax: limits.iso8583.frameBytesMax };
    const endpoint = await startInboundEndpoint({ issuer: cardIssuer({ pool: database.pool, keys }), logger }, {
      host: "127.0.0.1", port: 0, codec, connectionsMax: limits.iso8583.inboundConnectionsMax,
      inflightPerConnectionMax: limits.iso8583.inboundInflightPerConnectionMax, idleTimeoutMs: limits.iso8583.inboundIdleTimeoutMs,
    });
    const client = await SchemeClient.connect("127.0.0.1", endpoint.port, codec);
    const p99: { raw: number[]; tcp: number[] } = { raw: [], tcp: [] };
    let rounds;
    const batchesBefore = await batchCounts();
    try {
      await client.request(networkRequest("001", 1));   // the endpoint answers financial messages only after sign-on
      rounds = await alternate(endpointRounds,
        async (round) => {
          const raws = Array.from({ length: authorizations }, (_, i) => rawOf(keys, tenantId, requestOf(stanOf(round, 0, i))));
          await advanceProjection(database.pool, tenantId);   // each side starts from a folded balance projection
          const result = await throughput(authorizations, inflight, (i) => withTransaction(database.pool, (tx) => rawAuthorization(tx, raws[i] as RawAuthorization)));
          p99.raw.push(percentile(result.latenciesMs, 99));
          return result.opsPerSecond;
        },
        async (round) => {
          const requests = Array.from({ length: authorizations }, (_, i) => requestOf(stanOf(round, 1, i)));
          await advanceProjection(database.pool, tenantId);
          const result = await throughput(authorizations, inflight, async (i) => {
            const response = await client.request(requests[i] as Message);
            assert(response.fields[39] === "00", "endpoint authorization approved");
          });
          p99.tcp.push(percentile(result.latenciesMs, 99));
          return result.opsPerSecond;
        });
    } finally {
      await client.close();
      await endpoint.close();
    }
    const batches = await batchCounts();
    const committed = batches.committed - batchesBefore.committed;
    return {
      rows: [roundsRow(`authorizations through the TCP endpoint, ${inflight} in flight on one connection, ${cards} cards`, "authorizations/s",
        `raw per-message transaction by hand, ${inflight} in flight`, rounds, ">= 2")],
      notes: [
        `${authorizations} approved 0100s per side per round over ${cards} cards on ${cards} funded accounts; baseline checked to write the same rows as the handler before timing`,
        `ratio per round: ${rounds.ratios.map((r) => r.toFixed(2)).join(", ")}; endpoint batches (group commit, decision 0045): ${committed} committed, ${batches.fallback - batchesBefore.fallback} fell back; ${(authorizations * endpointRounds / Math.max(committed, 1)).toFixed(1)} originals per batch on average`,
        `p99 per round: endpoint ${p99.tcp.map((v) => v.toFixed(1)).join(", ")} ms; raw ${p99.raw.map((v) => v.toFixed(1)).join(", ")} ms`,
      ],
    };
  } finally {
    await database.close();
  }
}


export const run: Benchmark = async (args) => {
  const report: BenchReport = { name: "iso8583", rows: [], notes: [] };
  const codec = await codecSection();
  report.rows.push(...codec.rows);
  report.notes?.push(...codec.notes);
  if (args.includes("--codec-only")) return report;   // quick codec iterations; the full run times both sections
  const endpoint = await endpointSection(args);
  report.rows.push(...endpoint.rows);
  report.notes?.push(...endpoint.notes);
  return report;
};
