import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import SftpClient from "ssh2-sftp-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SftpPoller } from "../../src/sources/sftp.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { defaultRelaySettings, relayPass } from "../../src/outbox/relay.ts";
import { partnerDestination } from "../../src/partners/outbound/outbound-store.ts";
import { PartnerSftpDeliverer } from "../../src/partners/outbound/sftp-deliverer.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { fingerprintOf } from "../support/sftp-server.ts";
import { fixture, givenScene, ingest, noOutcomes } from "../files/support.ts";
import { givenDeliverableScene, outboxMessages, startPartnerSftp, withPartnerOutbound, type PartnerSftp } from "./support.ts";

const quiet = createLogger({ level: "silent" });

describe("a file refused at receipt: kept apart from the archive, and a rejection report back to the partner", () => {
  let db: TestDatabase;
  let sftp: PartnerSftp;

  beforeAll(async () => {
    db = await createTestDatabase();
    sftp = await startPartnerSftp("reject");
  });
  afterAll(async () => {
    await sftp.server.close();
    await db.drop();
  });

  it("writes a report naming each finding with its line, in the refusal's transaction, and nothing for an accepted file", async () => {
    const scene = await givenDeliverableScene(db.pool, "rej-report");
    const refused = await ingest(db.pool, scene, fixture("ach/malformed-block-count.ach"), "block-count.ach");
    expect(refused).toMatchObject({ status: "rejected", outcomes: noOutcomes });
    await ingest(db.pool, scene, fixture("ach/original.ach"), "original.ach");
    const messages = await outboxMessages(db.pool, scene.tenantId, partnerDestination(scene.partner.partnerId));
    expect(messages.map((m) => [m.messageType, m.messageKey])).toEqual([["file.rejection-report", `${refused.file_id}:rejection`]]);
    const { rows } = await db.pool.query<{ content: Buffer }>("SELECT content FROM partner_outbound_file WHERE tenant_id = $1", [scene.tenantId]);
    const report = JSON.parse(rows[0]?.content.toString("utf8") ?? "{}") as { file: string; status: string; findings: Array<{ code: string; line?: number }> };
    expect(report).toMatchObject({ file: "block-count.ach", status: "rejected" });
    expect(report.findings).toContainEqual(expect.objectContaining({ code: "ACH_FILE_BLOCK_COUNT_MISMATCH", line: 7 }));
  });

  it("queues no report for a partner with nowhere to deliver it, and says why once in the file's report (regression: the default setup warned for ever)", async () => {
    const scene = await givenScene(db.pool, "rej-nowhere");
    withPartnerOutbound([]);   // the default setup: no partnerOutbound entry names the partner
    const refused = await ingest(db.pool, scene, fixture("ach/malformed-block-count.ach"), "block-count.ach");
    expect(refused.status).toBe("rejected");
    expect(await outboxMessages(db.pool, scene.tenantId, partnerDestination(scene.partner.partnerId))).toEqual([]);
    const notSent = refused.warnings.filter((w) => w.code === "PARTNER_REPORT_NOT_SENT");
    expect(notSent).toHaveLength(1);
    expect(notSent[0]?.message).toMatch(new RegExp(`no rejection report was sent to partner ${scene.partner.name}: .*partnerOutbound`));
  });

  it("moves a refused SFTP file to the partner's rejected folder, not the archive, and delivers the report to its outbox", async () => {
    const scene = await givenDeliverableScene(db.pool, "rej-sftp");
    const partnerSide = new SftpClient("partner");
    await partnerSide.connect({ host: "127.0.0.1", port: sftp.server.port, username: "clearline", privateKey: sftp.userKey.private });
    await partnerSide.put(fixture("ach/malformed-block-count.ach"), "/inbox/broken.ach");
    await partnerSide.end();
    const poller = new SftpPoller({
      pool: db.pool, tenantId: scene.tenantId, partner: scene.partner, spoolFolder: mkdtempSync(path.join(tmpdir(), "clearline-spool-")), logger: quiet,
      source: { tenant: "rej-sftp", partner: scene.partner.name, host: "127.0.0.1", port: sftp.server.port, username: "clearline", privateKeyPath: sftp.keyFile, hostKeySha256: fingerprintOf(sftp.server.hostKey.public), inbox: "/inbox", namePattern: "\\.ach$", archive: "/archive", rejected: "/rejected", pollIntervalMs: 100 },
    });
    await poller.poll();
    const [taken] = (await poller.poll()).taken;
    expect(taken).toMatchObject({ status: "rejected" });
    expect(readdirSync(path.join(sftp.root, "archive"))).toEqual([]);
    expect(readdirSync(path.join(sftp.root, "rejected"))).toEqual([`${taken?.file_id}-broken.ach`]);

    const deliverer = new PartnerSftpDeliverer(db.pool, {
      partnerId: scene.partner.partnerId, host: "127.0.0.1", port: sftp.server.port, username: "clearline", privateKeyPath: sftp.keyFile,
      hostKeySha256: fingerprintOf(sftp.server.hostKey.public), outbox: "/outbox",
    });
    await relayPass(db.pool, [deliverer], "test-relay", defaultRelaySettings, quiet, new AbortController().signal);
    expect(readdirSync(path.join(sftp.root, "outbox"))).toEqual([`rejected-${taken?.file_id}.json`]);
    const report = JSON.parse(readFileSync(path.join(sftp.root, "outbox", `rejected-${taken?.file_id}.json`), "utf8")) as { file: string; findings: unknown[] };
    expect(report.file).toBe("broken.ach");
    expect(report.findings.length).toBeGreaterThan(0);
  });
});
