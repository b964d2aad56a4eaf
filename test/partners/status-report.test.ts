import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import SftpClient from "ssh2-sftp-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SftpPoller } from "../../src/sources/sftp.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { defaultRelaySettings, relayPass } from "../../src/outbox/relay.ts";
import { outboundFiles, partnerDestination } from "../../src/partners/outbound/outbound-store.ts";
import { PartnerSftpDeliverer } from "../../src/partners/outbound/sftp-deliverer.ts";
import { readIso20022Sync } from "../../src/protocols/iso20022/reader.ts";
import type { Iso20022Event } from "../../src/protocols/iso20022/types.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fingerprintOf, newKeyPair } from "../support/sftp-server.ts";
import { fixture, givenScene, ingest, noOutcomes, type Scene } from "../files/support.ts";
import { givenDeliverableScene, outboxMessages, startPartnerSftp, type PartnerSftp } from "./support.ts";

const quiet = createLogger({ level: "silent" });

/** The report read back with our own ISO 20022 reader: header values, then each line's values. */
function readReport(bytes: Uint8Array) {
  const events: Iso20022Event[] = readIso20022Sync(bytes);
  const header = events.find((e) => e.type === "header");
  const errors = events.flatMap((e) => (e.type === "finding" ? [e.finding] : e.type === "transaction" ? e.transaction.findings : [])).filter((f) => f.severity === "error");
  const lines = events.flatMap((e) => (e.type === "transaction" ? [e.transaction.values] : []));
  return { message: header?.type === "header" ? header.header.message.id : undefined, header: header?.type === "header" ? header.header.values : {}, errors, lines };
}

describe("pacs.002 status reports: every received pacs.008 or pain.001 is answered on the partner's channel", () => {
  let db: TestDatabase;
  let sftp: PartnerSftp;

  beforeAll(async () => {
    db = await createTestDatabase();
    sftp = await startPartnerSftp("partner");
  });
  afterAll(async () => {
    await sftp.server.close();
    await db.drop();
  });

  async function reports(scene: Scene) {
    return (await outboundFiles(db.pool, scene.tenantId, scene.partner.partnerId, 100)).filter((f) => f.kind === "pacs.002");
  }

  it("answers a pacs.008 whose transactions all applied: group ACCP, one ACSC line per transaction naming its references", async () => {
    const scene = await givenScene(db.pool, "sts-applied");
    await ingest(db.pool, scene, fixture("iso20022/pacs008-multi.xml"), "pacs008.xml");
    const [report] = await reports(scene);
    const read = readReport(report?.content ?? Buffer.alloc(0));
    expect(read.errors).toEqual([]);
    expect(read.message).toBe("pacs.002.001.10");
    expect(read.header).toMatchObject({ OrgnlMsgId: "CLR-20250310-0001", OrgnlMsgNmId: "pacs.008.001.08", GrpSts: "ACCP" });
    expect(read.lines.map((l) => [l.OrgnlEndToEndId, l.TxSts])).toEqual([["E2E-0001", "ACSC"], ["E2E-0002", "ACSC"], ["E2E-0003", "ACSC"]]);
    expect(read.lines[0]).toMatchObject({ OrgnlInstrId: "000123", OrgnlTxId: "TX0001", OrgnlUETR: "3f6a1c2e-7b4d-4e8a-9c1f-2a5b6c7d8e90" });
  });

  it("rejects a bad transaction with its ISO reason and the group as partly accepted", async () => {
    const scene = await givenScene(db.pool, "sts-part");
    const result = await ingest(db.pool, scene, fixture("iso20022/bad/pacs008-uetr-uppercase.xml"), "uetr.xml");
    expect(result.outcomes).toEqual({ ...noOutcomes, applied: 1, rejected: 1 });
    const read = readReport((await reports(scene))[0]?.content ?? Buffer.alloc(0));
    expect(read.errors).toEqual([]);
    expect(read.header).toMatchObject({ GrpSts: "PART" });
    expect(read.lines.map((l) => ({ e2e: l.OrgnlEndToEndId, status: l.TxSts, reason: l.StsRsnCd, uetr: l.OrgnlUETR })))
      .toEqual([{ e2e: "E2E-0001", status: "ACSC", reason: undefined, uetr: "3f6a1c2e-7b4d-4e8a-9c1f-2a5b6c7d8e90" }, { e2e: "E2E-0002", status: "RJCT", reason: "FF01", uetr: undefined }]);
  });

  it("answers held transactions as accepted, not settled, and a message received twice by one report", async () => {
    const scene = await givenScene(db.pool, "sts-held");
    await ingest(db.pool, scene, fixture("iso20022/pacs008-multi.xml"), "pacs008.xml");
    await ingest(db.pool, scene, fixture("iso20022/pacs008-multi.xml"), "pacs008-again.xml");
    expect(await reports(scene)).toHaveLength(1);
    await ingest(db.pool, scene, fixture("iso20022/pacs008-multi-resend.xml"), "pacs008-resend.xml");
    const all = await reports(scene);
    expect(all).toHaveLength(2);
    const resent = readReport(all[0]?.content ?? Buffer.alloc(0));
    expect(resent.lines.map((l) => l.TxSts).sort()).toEqual(["ACCP", "ACSC", "ACSC"]);
    expect(resent.header).toMatchObject({ GrpSts: "ACCP" });
  });

  it("does not answer messages that are not payment instructions (a pacs.002 received)", async () => {
    const scene = await givenScene(db.pool, "sts-none");
    await ingest(db.pool, scene, fixture("iso20022/pacs008-multi.xml"), "pacs008.xml");
    await ingest(db.pool, scene, fixture("iso20022/pacs002-status.xml"), "pacs002.xml");
    expect(await reports(scene)).toHaveLength(1);
  });

  it("a pacs.008 taken from the partner's SFTP inbox ends, through the outbox relay, with its pacs.002 in the partner's SFTP outbox, written under a temp name and renamed, once", async () => {
    const scene = await givenDeliverableScene(db.pool, "sts-sftp");
    const partnerSide = new SftpClient("partner");
    await partnerSide.connect({ host: "127.0.0.1", port: sftp.server.port, username: "clearline", privateKey: sftp.userKey.private });
    await partnerSide.put(fixture("iso20022/pacs008-multi.xml"), "/inbox/pacs008.xml");
    await partnerSide.end();
    const poller = new SftpPoller({
      pool: db.pool, tenantId: scene.tenantId, partner: scene.partner, spoolFolder: mkdtempSync(path.join(tmpdir(), "clearline-spool-")), logger: quiet,
      source: { tenant: "sts-sftp", partner: scene.partner.name, host: "127.0.0.1", port: sftp.server.port, username: "clearline", privateKeyPath: sftp.keyFile, hostKeySha256: fingerprintOf(sftp.server.hostKey.public), inbox: "/inbox", namePattern: "\\.xml$", archive: "/archive", pollIntervalMs: 100 },
    });
    await poller.poll();
    expect((await poller.poll()).taken).toMatchObject([{ status: "done", outcomes: { ...noOutcomes, applied: 3 } }]);

    const destination = partnerDestination(scene.partner.partnerId);
    const [message] = await outboxMessages(db.pool, scene.tenantId, destination);
    expect(message?.messageType).toBe("pacs.002");
    expect(message?.messageKey).toMatch(/^[0-9a-f]{64}:status$/);
    const deliverer = new PartnerSftpDeliverer(db.pool, {
      partnerId: scene.partner.partnerId, host: "127.0.0.1", port: sftp.server.port, username: "clearline", privateKeyPath: sftp.keyFile,
      hostKeySha256: fingerprintOf(sftp.server.hostKey.public), outbox: "/outbox",
    });
    if (!message) throw new Error("no outbox message");
    // The outbox relay delivers it (one pass, as `serve` runs them), then a redelivery of the same
    // row (the relay died after sending, before marking) leaves the partner one file, not two.
    await relayPass(db.pool, [deliverer], "test-relay", defaultRelaySettings, quiet, new AbortController().signal);
    const { rows } = await db.pool.query<{ state: string }>("SELECT state FROM outbox_message WHERE tenant_id = $1 AND id = $2", [scene.tenantId, message.id]);
    expect(rows).toEqual([{ state: "delivered" }]);
    await deliverer.deliver(message, new AbortController().signal);
    const names = readdirSync(path.join(sftp.root, "outbox"));
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(/^pacs002-[0-9a-f]{16}\.xml$/);
    const read = readReport(readFileSync(path.join(sftp.root, "outbox", names[0] ?? "")));
    expect(read.errors).toEqual([]);
    expect(read.header).toMatchObject({ OrgnlMsgId: "CLR-20250310-0001", GrpSts: "ACCP" });
    expect(read.lines.map((l) => l.TxSts)).toEqual(["ACSC", "ACSC", "ACSC"]);
  });

  it("refuses to deliver to a server whose host key is not the configured one, as a permanent failure, sending nothing", async () => {
    const scene = await givenDeliverableScene(db.pool, "sts-hostkey");
    await ingest(db.pool, scene, fixture("iso20022/pacs008-v07.xml"), "pacs008-v07.xml");
    const [message] = await outboxMessages(db.pool, scene.tenantId, partnerDestination(scene.partner.partnerId));
    if (!message) throw new Error("no outbox message");
    const before = readdirSync(path.join(sftp.root, "outbox"));
    const deliverer = new PartnerSftpDeliverer(db.pool, {
      partnerId: scene.partner.partnerId, host: "127.0.0.1", port: sftp.server.port, username: "clearline", privateKeyPath: sftp.keyFile,
      hostKeySha256: fingerprintOf(newKeyPair().public), outbox: "/outbox",
    });
    await expect(deliverer.deliver(message, new AbortController().signal)).rejects.toMatchObject({ name: "PartnerDeliveryError", code: "PARTNER_DELIVERY_HOST_KEY_MISMATCH" });
    expect(readdirSync(path.join(sftp.root, "outbox"))).toEqual(before);
    expect(existsSync(path.join(sftp.root, "outbox", `${message.messageKey}.part`))).toBe(false);
  });
});
