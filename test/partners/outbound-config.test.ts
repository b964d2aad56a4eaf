import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Finding } from "../../src/errors/finding.ts";
import { ingestSettings } from "../../src/config/sources-config.ts";
import { partnerDestination } from "../../src/partners/outbound/outbound-store.ts";
import { partnerDeliverers } from "../../src/partners/outbound/outbound-deliverers.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { givenScene } from "../files/support.ts";

const sftpPartner = { tenant: "acme", partner: "fedach", host: "sftp.example", username: "u", privateKeyPath: "/k", hostKeySha256: `SHA256:${"A".repeat(43)}`, inbox: "/in", archive: "/archive" };

describe("partnerOutbound: where each partner's files are delivered", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("reads a local folder (relative to the home) or the partner's SFTP server, whose connection comes from its sftpPartners entry", () => {
    const errors: Finding[] = [];
    const settings = ingestSettings({}, { sftpPartners: [sftpPartner], partnerOutbound: [{ tenant: "acme", partner: "other", folder: "out/other" }, { tenant: "acme", partner: "fedach", sftp: true }] }, "/home/cl", errors);
    expect(errors).toEqual([]);
    expect(settings.partnerOutbound).toEqual([{ tenant: "acme", partner: "other", folder: "/home/cl/out/other" }, { tenant: "acme", partner: "fedach", sftpOutbox: "outbox" }]);
  });

  it("refuses an entry with both channels or none, and an SFTP outbox without the partner's SFTP connection", () => {
    const errors: Finding[] = [];
    ingestSettings({}, { partnerOutbound: [{ tenant: "a", partner: "p", folder: "x", sftp: true }, { tenant: "a", partner: "p" }, { tenant: "a", partner: "q", sftp: true }] }, "/h", errors);
    expect(errors.map((e) => e.position.field)).toEqual(["partnerOutbound[0]", "partnerOutbound[1]", "partnerOutbound[2]"]);
  });

  it("builds one deliverer per configured partner for the relay, and names a partner that does not exist", async () => {
    const scene = await givenScene(db.pool, "outcfg");
    const { deliverers, errors } = await partnerDeliverers(db.pool, [{ tenant: "outcfg", partner: scene.partner.name, folder: "/tmp/x" }, { tenant: "outcfg", partner: "ghost", folder: "/tmp/y" }], []);
    expect(deliverers.map((d) => d.canDeliver(partnerDestination(scene.partner.partnerId)))).toEqual([true]);
    expect(errors.map((e) => e.code)).toEqual(["PARTNER_NOT_FOUND"]);
  });
});
