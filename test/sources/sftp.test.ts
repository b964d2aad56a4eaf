import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import SftpClient from "ssh2-sftp-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SftpPoller } from "../../src/sources/sftp.ts";
import type { SftpPartnerSource } from "../../src/config/sources-config.ts";
import { ingestSettings } from "../../src/config/sources-config.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { registry } from "../../src/observability/metrics.ts";
import type { Finding } from "../../src/errors/finding.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import {
  fingerprintOf, newKeyPair, startSftpServer, type KeyPair, type TestSftpServer,
} from "../support/sftp-server.ts";
import {
  balances, fixture, givenScene, noOutcomes, settlementOf, type Scene,
} from "../files/support.ts";

const quiet = createLogger({ level: "silent" });

describe("SFTP partners, against a real SFTP server", () => {
  let db: TestDatabase;
  let scene: Scene;
  let root: string;
  let server: TestSftpServer;
  let userKey: KeyPair;
  let keyFile: string;
  let source: SftpPartnerSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    scene = await givenScene(db.pool, "sftp");
    root = mkdtempSync(path.join(tmpdir(), "clearline-sftp-root-"));
    mkdirSync(path.join(root, "inbox"));
    mkdirSync(path.join(root, "archive"));
    userKey = newKeyPair();
    const local = mkdtempSync(path.join(tmpdir(), "clearline-sftp-local-"));
    keyFile = path.join(local, "id_ecdsa");
    writeFileSync(keyFile, userKey.private, { mode: 0o600 });
    server = await startSftpServer(root, { name: "clearline", publicKey: userKey.public });
    source = {
      tenant: "sftp", partner: scene.partner.name, host: "127.0.0.1", port: server.port, username: "clearline", privateKeyPath: keyFile,
      hostKeySha256: fingerprintOf(server.hostKey.public), inbox: "/inbox", namePattern: "\\.ach$", archive: "/archive", pollIntervalMs: 100,
    };
  });
  afterAll(async () => {
    await server.close();
    await db.drop();
  });

  function poller(overrides: Partial<SftpPartnerSource> = {}, on: Scene = scene, logger = quiet): SftpPoller {
    return new SftpPoller({ pool: db.pool, tenantId: on.tenantId, partner: on.partner, source: { ...source, ...overrides }, spoolFolder: mkdtempSync(path.join(tmpdir(), "clearline-spool-")), logger });
  }

  /** The partner's side: upload under a temp name, then rename, over SFTP. */
  async function partnerUploads(name: string, content: Buffer): Promise<void> {
    const client = new SftpClient("partner");
    await client.connect({ host: "127.0.0.1", port: server.port, username: "clearline", privateKey: userKey.private });
    try {
      await client.put(content, `/inbox/${name}.part`);
      await client.rename(`/inbox/${name}.part`, `/inbox/${name}`);
    } finally {
      await client.end();
    }
  }

  it("takes a file uploaded under a temp name and renamed once its size is stable, ingests it and archives it", async () => {
    await partnerUploads("payroll.ach", fixture("ach/original.ach"));
    const sftp = poller();
    const firstLook = await sftp.poll();
    expect(firstLook).toEqual({ taken: [], waiting: ["payroll.ach"] });
    const secondLook = await sftp.poll();
    expect(secondLook.taken).toMatchObject([{ name: "payroll.ach", source: "sftp", status: "done", outcomes: { ...noOutcomes, applied: 5 } }]);
    expect(readdirSync(path.join(root, "inbox"))).toEqual([]);
    expect(readdirSync(path.join(root, "archive"))).toEqual([`${secondLook.taken[0]?.file_id}-payroll.ach`]);
    expect((await balances(db.pool, scene.tenantId))[settlementOf(scene)]).toBe(150_000n);
  });

  it("applies only the new record of a corrected re-upload", async () => {
    await partnerUploads("payroll-corrected.ach", fixture("ach/corrected.ach"));
    const sftp = poller();
    await sftp.poll();
    const { taken } = await sftp.poll();
    expect(taken).toMatchObject([{ name: "payroll-corrected.ach", outcomes: { ...noOutcomes, applied: 1, duplicate: 3, conflict: 1 } }]);
    expect((await balances(db.pool, scene.tenantId))[settlementOf(scene)]).toBe(210_000n);
  });

  it("waits for the done marker when the partner uses one", async () => {
    const other = await givenScene(db.pool, "sftp-marker");
    await partnerUploads("twins.ach", fixture("ach/twins.ach"));
    const sftp = poller({ doneMarkerSuffix: ".done" }, other);
    await sftp.poll();
    expect((await sftp.poll()).waiting).toEqual(["twins.ach"]);
    writeFileSync(path.join(root, "inbox", "twins.ach.done"), "");
    expect((await sftp.poll()).taken).toMatchObject([{ name: "twins.ach", outcomes: { ...noOutcomes, applied: 2 } }]);
    expect(readdirSync(path.join(root, "inbox"))).toEqual([]);
  });

  it("refuses a server whose host key is not the configured one, takes nothing and counts the failure", async () => {
    writeFileSync(path.join(root, "inbox", "other.ach"), fixture("ach/base-valid.ach"));
    const sftp = poller({ hostKeySha256: fingerprintOf(newKeyPair().public) });
    await expect(sftp.poll()).rejects.toMatchObject({ code: "SOURCE_SFTP_HOST_KEY_MISMATCH" });
    expect(existsSync(path.join(root, "inbox", "other.ach"))).toBe(true);
    const { rows } = await db.pool.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM received_file WHERE tenant_id = $1
         AND original_name = 'other.ach'`,
      [scene.tenantId]);
    expect(rows[0]?.n).toBe(0n);
  });

  it("backs off after failures, doubling from the poll interval up to the bound, and counts them per partner", async () => {
    // The first failure's log line is the event waited for: stopped then, before the next poll.
    let failed!: () => void;
    const firstFailure = new Promise<void>((resolve) => (failed = resolve));
    const destination = new Writable({ write(chunk, _encoding, done) { if (String(chunk).includes("SFTP poll failed")) failed(); done(); } });
    const sftp = poller({ hostKeySha256: fingerprintOf(newKeyPair().public), pollIntervalMs: 1_000 }, scene, createLogger({ level: "warn", destination }));
    sftp.start();
    await firstFailure;
    await sftp.stop();
    expect(sftp.backoffMs()).toBe(2_000);
    expect(await registry.getSingleMetricAsString("clearline_ingest_sftp_poll_failures_total")).toMatch(new RegExp(`partner="${scene.partner.name}"} [1-9]`));
  });

  it("refuses a configuration without the server's host key fingerprint", () => {
    const errors: Finding[] = [];
    const { hostKeySha256: _omitted, ...withoutKey } = { ...source, tenant: "t", partner: "p" };
    ingestSettings({}, { sftpPartners: [withoutKey] }, "/tmp", errors);
    expect(errors).toMatchObject([{ code: "SOURCE_SFTP_HOST_KEY_MISSING" }]);
  });
});
