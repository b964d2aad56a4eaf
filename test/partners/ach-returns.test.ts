import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAccount } from "../../src/ledger/accounts.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { defaultRelaySettings, relayPass } from "../../src/outbox/relay.ts";
import { addAccountAlias } from "../../src/partners/partners.ts";
import { PartnerFolderDeliverer } from "../../src/partners/outbound/folder-deliverer.ts";
import { outboundFile, partnerDestination } from "../../src/partners/outbound/outbound-store.ts";
import { cutReturnFile, returnFileKeyOf } from "../../src/files/return-cut.ts";
import { parseAch, validateAch } from "../../src/protocols/ach/reader.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { post, transferOf } from "../support/ledger-fixtures.ts";
import {
  achFixtureDated, balances, fixture, givenScene, ingest, noOutcomes, settlementOf, type Scene,
} from "../files/support.ts";
import { givenDeliverableScene, outboxMessages, withPartnerOutbound } from "./support.ts";

const quiet = createLogger({ level: "silent" });
/** Cut-offs far after the clock: a cut takes the returns recorded up to its cut-off, and a fixed cut-off of today's date
 *  stopped covering the returns these tests record once the clock passed it (CI on 2026-12-03 at 16:01). */
const cutoff = new Date("2099-01-02T16:00:00.000Z");
const cutoffFileName = "returns-20990102T160000Z.ach";
/**
 * base-valid.ach dated Wednesday 31 December 2098: a return cut at the cut-off, Friday 2 January
 * 2099, is in time (docs/decisions/0094); one of the file as written (March 2025) is refused.
 */
const baseValid = achFixtureDated("ach/base-valid.ach", "981231");
const field = (fields: Record<string, string> | undefined, name: string) => (fields?.[name] ?? "").trim();

describe("ACH returns: a refused incoming debit goes back to its partner in a NACHA return file", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  /** base-valid.ach debits ALAN TURING 980.50 (line 4, trace 231380100000002); his account holds 500.00. */
  async function givenTuringShort(name: string): Promise<Scene> {
    const scene = await givenDeliverableScene(db.pool, name);
    await openAccount(db.pool, { tenantId: scene.tenantId, accountId: "turing", kind: "customer", currency: "USD" });
    await addAccountAlias(db.pool, scene.tenantId, "aba:021000021:9876543", "turing");
    await post(db.pool, transferOf(scene.tenantId, "seed", settlementOf(scene), "turing", 50_000n));
    return scene;
  }

  async function pendingReturns(tenantId: string) {
    const { rows } = await db.pool.query<{ natural_key: string; line: number; reason_code: string; cut_key: string | null }>(
      "SELECT natural_key, line, reason_code, cut_key FROM ach_return_entry WHERE tenant_id = $1 ORDER BY line", [tenantId]);
    return rows;
  }

  it("records the refused debit for return as R01 with the refusal, once however often the file comes back", async () => {
    const scene = await givenTuringShort("ret-record");
    const report = await ingest(db.pool, scene, baseValid, "base.ach");
    expect(report.outcomes).toEqual({ ...noOutcomes, applied: 2, rejected: 1 });
    await ingest(db.pool, scene, baseValid, "base-again.ach");
    expect(await pendingReturns(scene.tenantId)).toEqual([{ natural_key: expect.stringContaining("231380100000002"), line: 4, reason_code: "R01", cut_key: null }]);
  });

  it("cuts the partner's pending returns into one return file: entry 26 to the ODFI, addenda 99 with R01 and the original trace; our reader finds no error", async () => {
    const scene = await givenTuringShort("ret-cut");
    await ingest(db.pool, scene, baseValid, "base.ach");
    const cut = await cutReturnFile(db.pool, scene.tenantId, scene.partner.partnerId, cutoff);
    expect(cut).toEqual({ kind: "cut", fileKey: returnFileKeyOf(scene.partner.partnerId, cutoff), fileName: cutoffFileName, entries: 1 });
    const file = await outboundFile(db.pool, scene.tenantId, scene.partner.partnerId, returnFileKeyOf(scene.partner.partnerId, cutoff));
    const content = file?.content ?? Buffer.alloc(0);

    const summary = await validateAch(content);
    expect(summary.findings.filter((f) => f.severity === "error")).toEqual([]);
    const parsed = parseAch(content);
    expect(field(parsed.fileHeader?.fields, "immediateDestination")).toBe("231380104");   // back to the sender: the original immediate origin
    expect(parsed.batches).toHaveLength(1);
    const [entry] = parsed.batches[0]?.entries ?? [];
    expect({
      transactionCode: field(entry?.record.fields, "transactionCode"), receivingDfi: field(entry?.record.fields, "receivingDfiIdentification"),
      account: field(entry?.record.fields, "dfiAccountNumber"), amount: field(entry?.record.fields, "amount"), name: field(entry?.record.fields, "individualName"),
    }).toEqual({ transactionCode: "26", receivingDfi: "23138010", account: "9876543", amount: "0000098050", name: "ALAN TURING" });
    expect(entry?.addenda.map((a) => ({ layout: a.layout, reason: field(a.fields, "returnReasonCode"), originalTrace: field(a.fields, "originalEntryTraceNumber"), originalRdfi: field(a.fields, "originalReceivingDfiIdentification") })))
      .toEqual([{ layout: "addenda-99", reason: "R01", originalTrace: "231380100000002", originalRdfi: "02100002" }]);
    expect((await pendingReturns(scene.tenantId)).map((r) => r.cut_key)).toEqual([cut.kind === "cut" ? cut.fileKey : "?"]);
    expect(await cutReturnFile(db.pool, scene.tenantId, scene.partner.partnerId, new Date("2099-01-02T17:00:00.000Z"))).toEqual({ kind: "empty" });
  });

  it("the return file, ingested by a clearline that holds the original entry, is linked to it and reverses it", async () => {
    const scene = await givenTuringShort("ret-loop");
    const base = baseValid;
    await ingest(db.pool, scene, base, "base.ach");
    await cutReturnFile(db.pool, scene.tenantId, scene.partner.partnerId, cutoff);
    const file = await outboundFile(db.pool, scene.tenantId, scene.partner.partnerId, returnFileKeyOf(scene.partner.partnerId, cutoff));

    const other = await givenScene(db.pool, "ret-loop-odfi");   // a side that applied the same debit
    await ingest(db.pool, other, base, "base.ach");
    const returned = await ingest(db.pool, other, file?.content ?? Buffer.alloc(0), "returns.ach");
    expect(returned).toMatchObject({ status: "done", outcomes: { ...noOutcomes, applied: 1 }, errors: [] });
    const { rows } = await db.pool.query<{ original_ref: string | null; kind: string }>(
      `SELECT original_ref, kind FROM record_outcome WHERE tenant_id = $1
         AND file_id = $2`, [other.tenantId, returned.file_id]);
    expect(rows).toEqual([{ kind: "return", original_ref: expect.stringContaining("231380100000002") }]);
  });

  it("refuses to produce a return past its deadline: RETURN_DEADLINE_PASSED, no file, no later cut", async () => {
    const scene = await givenTuringShort("ret-late");
    await ingest(db.pool, scene, fixture("ach/base-valid.ach"), "base.ach");
    // Refused entry dated 5 March 2025: its R01 had until Friday 7 March; the cut is in 2099.
    const cut = await cutReturnFile(db.pool, scene.tenantId, scene.partner.partnerId, cutoff);
    expect(cut).toEqual({ kind: "empty", refused: [{
      naturalKey: "ach:23138010:231380100000002:1234567890:PPD:250305",
      code: "RETURN_DEADLINE_PASSED",
      detail: expect.stringMatching(/past its deadline 2025-03-07 \(two-banking-days from 2025-03-05\)/),
    }] });
    expect(await outboundFile(db.pool, scene.tenantId, scene.partner.partnerId, returnFileKeyOf(scene.partner.partnerId, cutoff))).toBeUndefined();
    const later = new Date("2099-01-03T16:00:00.000Z");
    expect(await cutReturnFile(db.pool, scene.tenantId, scene.partner.partnerId, later)).toEqual({ kind: "empty" });
    const { rows } = await db.pool.query<{ cut_key: string | null; refused_code: string | null }>(
      "SELECT cut_key, refused_code FROM ach_return_entry WHERE tenant_id = $1", [scene.tenantId]);
    expect(rows).toEqual([{ cut_key: null, refused_code: "RETURN_DEADLINE_PASSED" }]);
  });

  it("leaves returns recorded after the cut-off for the next cut", async () => {
    const scene = await givenTuringShort("ret-later");
    await ingest(db.pool, scene, baseValid, "base.ach");
    expect(await cutReturnFile(db.pool, scene.tenantId, scene.partner.partnerId, new Date("2020-01-01T00:00:00.000Z"))).toEqual({ kind: "empty" });
    expect((await pendingReturns(scene.tenantId)).map((r) => r.cut_key)).toEqual([null]);
  });

  it("puts each return in exactly one file when two cuts run at once", async () => {
    const scene = await givenTuringShort("ret-race");
    await ingest(db.pool, scene, baseValid, "base.ach");
    const cuts = await Promise.all([
      cutReturnFile(db.pool, scene.tenantId, scene.partner.partnerId, cutoff),
      cutReturnFile(db.pool, scene.tenantId, scene.partner.partnerId, new Date("2099-01-02T16:00:01.000Z")),
    ]);
    expect(cuts.map((c) => c.kind).sort()).toEqual(["cut", "empty"]);
    const { rows } = await db.pool.query<{ n: bigint }>("SELECT count(*) AS n FROM partner_outbound_file WHERE tenant_id = $1 AND kind = 'ach.return-file'", [scene.tenantId]);
    expect(rows[0]?.n).toBe(1n);
  });

  it("keeps a return file cut for a partner with nowhere to deliver it but queues nothing, and the cut says why", async () => {
    const scene = await givenTuringShort("ret-nowhere");
    withPartnerOutbound([]);
    await ingest(db.pool, scene, baseValid, "base.ach");
    const cut = await cutReturnFile(db.pool, scene.tenantId, scene.partner.partnerId, cutoff);
    expect(cut).toMatchObject({ kind: "cut", entries: 1, notSent: expect.stringMatching(new RegExp(`not sent to partner ${scene.partner.name}: .*partnerOutbound`)) });
    expect(await outboundFile(db.pool, scene.tenantId, scene.partner.partnerId, returnFileKeyOf(scene.partner.partnerId, cutoff))).toBeDefined();
    expect(await outboxMessages(db.pool, scene.tenantId, partnerDestination(scene.partner.partnerId))).toEqual([]);
  });

  it("enqueues the return file to the partner in the cut's transaction; the relay's folder deliverer puts it in the partner's outbound folder, one file however often it is redelivered", async () => {
    const scene = await givenTuringShort("ret-deliver");
    await ingest(db.pool, scene, baseValid, "base.ach");
    await cutReturnFile(db.pool, scene.tenantId, scene.partner.partnerId, cutoff);
    const destination = partnerDestination(scene.partner.partnerId);
    const messages = await outboxMessages(db.pool, scene.tenantId, destination);
    expect(messages.map((m) => ({ type: m.messageType, key: m.messageKey }))).toEqual([{ type: "ach.return-file", key: returnFileKeyOf(scene.partner.partnerId, cutoff) }]);

    const folder = mkdtempSync(path.join(tmpdir(), "clearline-partner-out-"));
    const deliverer = new PartnerFolderDeliverer(db.pool, { partnerId: scene.partner.partnerId, folder });
    expect(deliverer.canDeliver(destination)).toBe(true);
    expect(deliverer.canDeliver("partner:someone-else")).toBe(false);
    const message = messages[0];
    if (!message) throw new Error("no outbox message");
    await relayPass(db.pool, [deliverer], "test-relay", defaultRelaySettings, quiet, new AbortController().signal);
    const { rows } = await db.pool.query<{ state: string }>("SELECT state FROM outbox_message WHERE tenant_id = $1 AND id = $2", [scene.tenantId, message.id]);
    expect(rows).toEqual([{ state: "delivered" }]);
    await deliverer.deliver(message, new AbortController().signal);   // redelivered: the relay died before marking
    expect(readdirSync(folder)).toEqual([cutoffFileName]);
    const delivered = parseAch(readFileSync(path.join(folder, cutoffFileName)));
    expect(delivered.summary.findings.filter((f) => f.severity === "error")).toEqual([]);
    expect(delivered.batches.flatMap((b) => b.entries.flatMap((e) => e.addenda.map((a) => field(a.fields, "returnReasonCode"))))).toEqual(["R01"]);
    expect((await balances(db.pool, scene.tenantId)).turing).toBe(50_000n);   // the return moves no money: nothing was posted
  });
});
