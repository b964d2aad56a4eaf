import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addCard, loadCardKeys } from "../../src/cards/index.ts";
import { withLuhnCheckDigit } from "../../src/cards/cards.ts";
import { createPool, type Pool } from "../../src/db/pool.ts";
import { withTransaction } from "../../src/db/transaction.ts";
import { verifyLedger } from "../../src/ledger/verify.ts";
import { balanceOf } from "../../src/ledger/balance.ts";
import { addAccountAlias, createPartner } from "../../src/partners/partners.ts";
import { routingCheckDigit } from "../../src/protocols/ach/routing.ts";
import { writeAchFile, type AchEntryModel } from "../../src/protocols/ach/writer.ts";
import { createTenant } from "../../src/tenants/tenants.ts";
import { eventually } from "../support/eventually.ts";
import { runHa } from "../support/ha/command.ts";
import { Prng } from "../sim/prng.ts";
import {
  CardLink, cardAuthorization, httpSend, sendUntilFinal, startServe,
  type CardOriginal, type Seen, type Serve,
} from "./failover-load-traffic.ts";

// Issue 32, "Failover under load" (decision 0078): two serve processes behind the HA cluster's
// HAProxy address, HTTP payments and refunds retried with their keys, a 20,000-record ACH file,
// card authorizations and reversals over the socket; kill -9 of the primary mid-traffic. The
// seed is CLEARLINE_FAILOVER_SEED (default 1); figures go to stdout and, when set, to the file
// CLEARLINE_FAILOVER_REPORT (one JSON line per run).
const seed = Number(process.env.CLEARLINE_FAILOVER_SEED ?? "1");
const portBase = 15_500;
const onPorts = ["--port-base", String(portBase)];
const fileRecords = 20_000;
const fileBoundMs = 900_000;
const customers = Array.from({ length: 8 }, (_, i) => `customer-${i + 1}`);
const cardHashSecret = randomBytes(32).toString("hex");

let url: string;
let pool: Pool;
let apiKey: string;
let tenantId: string;
const serves: Serve[] = [];
const pans: string[] = [];

interface Intent {
  kind: "payment" | "refund";
  clientReference: string;
  status: number | undefined;
}

const seen: Seen[] = [];
const cardSeen: Seen[] = [];
const intents: Intent[] = [];
const cards: CardOriginal[] = [];

beforeAll(async () => {
  // The serve processes run the compiled command: built from this checkout first.
  execFileSync("npm", ["run", "-s", "build"], { stdio: "inherit" });
  await runHa(["down", ...onPorts]);
  url = (await runHa(["up", ...onPorts])).lastLine;
  const env = {
    DATABASE_URL: url, CLEARLINE_CARD_HASH_SECRET: cardHashSecret, CLEARLINE_FLEET_LEASE_MS: "3000",
    CLEARLINE_HOME: mkdtempSync(path.join(tmpdir(), "clearline-failover-")),
  };
  // Their logs (warnings and errors), for a look after a run that went wrong.
  const logOf = (n: number) => path.join(tmpdir(), `clearline-failover-${seed}-serve${n}.log`);
  serves.push(await startServe(env, logOf(1)));
  serves.push(await startServe({
    ...env, CLEARLINE_HOME: mkdtempSync(path.join(tmpdir(), "clearline-failover-")),
  }, logOf(2)));
  pool = createPool(url, { max: 4 });
  await setUpWorld();
});

afterAll(async () => {
  await Promise.all(serves.map((serve) => serve.stop()));
  await pool?.end();
  await runHa(["down", ...onPorts]);
});

async function setUpWorld(): Promise<void> {
  const tenant = await createTenant(pool, `failover-${seed}`);
  if (!tenant.ok) throw new Error(tenant.error.message);
  ({ apiKey, tenantId } = tenant.value);
  const base = (serves[0] as Serve).baseUrl;
  const accounts = [["settlement", "settlement"], ["merchant", "customer"],
    ...customers.map((c) => [c, "customer"])];
  for (const [id, kind] of accounts) {
    const opened = await httpSend(base, apiKey, "POST", "/v1/accounts", { id, kind, currency: "USD" });
    if (opened?.status !== 201) throw new Error(`account ${id}: ${JSON.stringify(opened)}`);
  }
  for (const customer of customers) {
    const body = { client_reference: `fund-${customer}`, amount: "1000000.00", currency: "USD",
      debtor_account: "settlement", creditor_account: customer };
    const funded = await httpSend(base, apiKey, "POST", "/v1/payments", body,
      { "idempotency-key": `fund-${customer}` });
    if (funded?.status !== 201) throw new Error(`funding ${customer}: ${JSON.stringify(funded)}`);
  }
  const partner = await createPartner(pool, tenantId, "failover-partner");
  if (!partner.ok) throw new Error(partner.error.message);
  const keys = loadCardKeys({ home: tmpdir(), secretHex: cardHashSecret });
  for (const [index, customer] of customers.entries()) {
    const rdfi = `0910000${index + 1}`;
    const alias = `aba:${rdfi}${routingCheckDigit(rdfi)}:ACCT${index + 1}`;
    const added = await addAccountAlias(pool, tenantId, alias, customer);
    if (!added.ok) throw new Error(added.error.message);
    const pan = withLuhnCheckDigit(`476173${String(index + 1).padStart(9, "0")}`);
    await withTransaction(pool, async (tx) => {
      const card = await addCard(tx, keys, { tenantId, pan, accountId: customer });
      if (!card.ok) throw new Error(card.error.message);
    });
    pans.push(pan);
  }
}

/** An ACH file of `fileRecords` credits to the customers, traces unique to the seed. */
function achFile(rng: Prng): Buffer {
  const entries: AchEntryModel[] = Array.from({ length: fileRecords }, (_, i) => {
    const customer = rng.int(1, customers.length);
    const rdfi = `0910000${customer}`;
    return { fields: {
      transactionCode: "22", receivingDfiIdentification: rdfi, checkDigit: routingCheckDigit(rdfi),
      dfiAccountNumber: `ACCT${customer}`, amount: String(rng.int(1, 100_000)),
      individualIdentificationNumber: `FO${String(i).padStart(9, "0")}`, individualName: "FAILOVER",
      traceNumber: `23138010${String(i + 1).padStart(7, "0")}`,
    } };
  });
  const written = writeAchFile({
    fileHeader: {
      priorityCode: "01", immediateDestination: " 091000019", immediateOrigin: " 231380104",
      fileCreationDate: "261204", fileCreationTime: "2300", fileIdModifier: "A",
      immediateDestinationName: "CLEARLINE BANK", immediateOriginName: `FAILOVER ${seed}`,
    },
    batches: [{
      header: {
        serviceClassCode: "220", companyName: "FAILOVER", companyIdentification: "1231380104",
        standardEntryClassCode: "PPD", companyEntryDescription: "PAYROLL",
        companyDescriptiveDate: "DEC 04", effectiveEntryDate: "261204", originatorStatusCode: "1",
        originatingDfiIdentification: "23138010", batchNumber: "1",
      },
      entries,
    }],
  });
  if (!written.ok) throw new Error(written.error.message);
  return written.value;
}

let stopping = false;

/** One client's loop: payments (and with a chance a refund of each) until told to stop. */
async function paymentClient(worker: number, rng: Prng): Promise<void> {
  for (let n = 0; !stopping; n++) {
    const serve = serves[(worker + n) % serves.length] as Serve;
    const reference = `fo-${seed}-w${worker}-${n}`;
    const body = { client_reference: reference, amount: `0.${String(rng.int(1, 99)).padStart(2, "0")}`,
      currency: "USD", debtor_account: customers[rng.int(0, customers.length - 1)],
      creditor_account: "merchant" };
    const payment: Intent = { kind: "payment", clientReference: reference, status: undefined };
    intents.push(payment);
    const answer = await sendUntilFinal(() => httpSend(serve.baseUrl, apiKey, "POST", "/v1/payments",
      body, { "idempotency-key": reference }), seen);
    payment.status = answer?.status;
    if (answer?.status !== 201 || !rng.chance(0.3)) continue;
    const refundReference = `${reference}-refund`;
    const refund: Intent = { kind: "refund", clientReference: refundReference, status: undefined };
    intents.push(refund);
    const refunded = await sendUntilFinal(() => httpSend(serve.baseUrl, apiKey, "POST", "/v1/refunds",
      { client_reference: refundReference, payment_client_reference: reference, amount: "0.01" },
      { "idempotency-key": refundReference }), seen);
    refund.status = refunded?.status;
  }
}

async function cardClient(rng: Prng): Promise<void> {
  const link = new CardLink((serves[1] as Serve).iso8583Port);
  try {
    while (!stopping) {
      cards.push(await cardAuthorization(link, rng, pans[rng.int(0, pans.length - 1)] as string,
        cardSeen));
    }
  } finally {
    await link.close();
  }
}

interface FileRun {
  fileId: string | undefined;
  status: number | undefined;
}

/** The file over POST /v1/files, retried with its key until answered (a retry resumes it). */
async function fileClient(bytes: Buffer, run: FileRun): Promise<void> {
  const serve = serves[0] as Serve;
  const key = `fo-${seed}-file`;
  // The answer comes once the whole file is processed: minutes on a busy 2-core machine.
  const answer = await sendUntilFinal(() => httpSend(serve.baseUrl, apiKey, "POST",
    `/v1/files?name=failover-${seed}.ach`, bytes, { "idempotency-key": key }, fileBoundMs), [],
  fileBoundMs);
  run.status = answer?.status;
  run.fileId = answer?.json?.file_id;
}

async function fileProgress(): Promise<number> {
  const { rows } = await pool.query<{ done: number }>(
    "SELECT coalesce(max(records_done), 0)::int AS done FROM received_file WHERE tenant_id = $1",
    [tenantId]);
  return rows[0]?.done ?? 0;
}

function countKinds(list: Seen[], from: number, to: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of list) if (s.at >= from && s.at <= to) counts[s.kind] = (counts[s.kind] ?? 0) + 1;
  return counts;
}

describe(`failover under load (seed ${seed})`, () => {
  it("keeps every acknowledged payment, file record and card approval, one effect per key", async () => {
    const rng = new Prng(seed);
    const file: FileRun = { fileId: undefined, status: undefined };
    const fileDone = fileClient(achFile(new Prng(seed, 1)), file);
    const clients = [0, 1, 2, 3].map((w) => paymentClient(w, new Prng(seed, 10 + w)));
    const cardDone = cardClient(new Prng(seed, 2));
    // Mid-traffic: the file is being ingested and payments are flowing.
    await eventually(async () => (await fileProgress()) > 0
      && intents.filter((i) => i.status === 201).length >= 20, 100);
    await new Promise((resolve) => setTimeout(resolve, rng.int(0, 2_000)));
    const recordsBeforeKill = await fileProgress();
    const { lastLine } = await runHa(["kill-primary", "--json", ...onPorts]);
    const killed = JSON.parse(lastLine) as { node: string; killedAt: string };
    const killedAt = new Date(killed.killedAt).getTime();
    await eventually(() => seen.some((s) => s.sentAt > killedAt && s.kind === "201"), 100);
    const firstSuccessAt = Math.min(...seen.filter((s) => s.sentAt > killedAt && s.kind === "201")
      .map((s) => s.at));
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    stopping = true;
    await Promise.all([...clients, cardDone, fileDone]);

    const figures = {
      seed, killed: killed.node, recordsBeforeKill,
      windowSeconds: Number(((firstSuccessAt - killedAt) / 1_000).toFixed(1)),
      httpAnswersDuringWindow: countKinds(seen, killedAt, firstSuccessAt),
      cardAnswersDuringWindow: countKinds(cardSeen, killedAt, firstSuccessAt),
      payments: intents.filter((i) => i.kind === "payment").length,
      refunds: intents.filter((i) => i.kind === "refund").length,
      cardOriginals: cards.length,
      fileStatus: file.status,
    };
    console.log(`failover figures ${JSON.stringify(figures)}`);
    if (process.env.CLEARLINE_FAILOVER_REPORT) {
      appendFileSync(process.env.CLEARLINE_FAILOVER_REPORT, `${JSON.stringify(figures)}\n`);
    }
    await checkAfterFailover(file);
  }, 1_500_000);
});

async function existingTransfers(keys: string[]): Promise<Set<string>> {
  const { rows } = await pool.query<{ transfer_key: string }>(
    "SELECT transfer_key FROM transfer WHERE tenant_id = $1 AND transfer_key = ANY($2::text[])",
    [tenantId, keys]);
  return new Set(rows.map((r) => r.transfer_key));
}

async function checkAfterFailover(file: FileRun): Promise<void> {
  // Every client got a final answer, and every acknowledged effect is on the new primary.
  expect(intents.filter((i) => i.status !== 201 && i.status !== 422)).toEqual([]);
  const expected = intents.filter((i) => i.status === 201)
    .map((i) => `api:${i.clientReference}:${i.kind === "payment" ? "debit" : "refund"}`);
  const approved = cards.filter((c) => c.responseCode === "00");
  expected.push(...approved.map((c) => `${c.naturalKey}:hold`));
  expected.push(...approved.filter((c) => c.reversalAcknowledged)
    .map((c) => `${c.naturalKey}:release`));
  const found = await existingTransfers(expected);
  expect(expected.filter((key) => !found.has(key))).toEqual([]);
  expect(cards.filter((c) => c.responseCode === undefined)).toEqual([]);
  // One effect per key: no client_reference posted twice.
  const { rows: twice } = await pool.query(
    `SELECT client_reference, count(*) FROM payment WHERE tenant_id = $1
      GROUP BY client_reference HAVING count(*) > 1`, [tenantId]);
  expect(twice).toEqual([]);
  // The file finished, every record with exactly one outcome.
  expect(file.status === 201 || file.status === 200).toBe(true);
  const { rows: [fileRow] } = await pool.query<{ status: string; outcomes: number; records: number }>(
    `SELECT f.status,
            (SELECT count(*) FROM record_outcome o WHERE o.tenant_id = f.tenant_id AND o.file_id = f.file_id)::int AS outcomes,
            (SELECT count(DISTINCT record_index) FROM record_outcome o WHERE o.tenant_id = f.tenant_id AND o.file_id = f.file_id)::int AS records
       FROM received_file f WHERE f.tenant_id = $1 AND f.file_id = $2`, [tenantId, file.fileId]);
  expect(fileRow).toEqual({ status: "done", outcomes: fileRecords, records: fileRecords });
  // The ledger's own check, and every balance read equals the sum of its entries.
  const verified = await verifyLedger(pool);
  expect(verified.problems).toEqual([]);
  expect(verified.ok).toBe(true);
  const { rows: sums } = await pool.query<{ account_id: string; debits: string; credits: string }>(
    `SELECT a.account_id,
            coalesce(sum(e.amount_minor) FILTER (WHERE e.direction = 'D'), 0)::text AS debits,
            coalesce(sum(e.amount_minor) FILTER (WHERE e.direction = 'C'), 0)::text AS credits
       FROM account a LEFT JOIN ledger_entry e
         ON e.tenant_id = a.tenant_id AND e.account_id = a.account_id
      WHERE a.tenant_id = $1 GROUP BY a.account_id`, [tenantId]);
  for (const sum of sums) {
    const read = await balanceOf(pool, tenantId, sum.account_id);
    expect({ debits: read?.debitsMinor, credits: read?.creditsMinor }, sum.account_id)
      .toEqual({ debits: BigInt(sum.debits), credits: BigInt(sum.credits) });
  }
}
