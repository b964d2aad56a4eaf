import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SftpPartnerSource } from "../../src/config/sources-config.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { SftpPoller } from "../../src/sources/sftp.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";
import { startFaultProxy, type FaultProxy } from "../support/net/index.ts";
import {
  fingerprintOf, newKeyPair, startSftpServer, type TestSftpServer,
} from "../support/sftp-server.ts";
import { balances, fixture, givenScene, settlementOf, type Scene } from "../files/support.ts";

const quiet = createLogger({ level: "silent" });

/**
 * A partner's SFTP server whose connection is cut at points all through a poll (a reset or a FIN
 * after N bytes from the server, through the fault proxy: in the handshake, the listing, the
 * download, the archive's rename): each poll settles, failing or taking the file; once healed,
 * the file is off the server; its records are applied once, whichever poll took it.
 */
describe("an SFTP poll cut by the network", () => {
  let db: TestDatabase;
  let scene: Scene;
  let root: string;
  let server: TestSftpServer;
  let proxy: FaultProxy;
  let source: SftpPartnerSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    scene = await givenScene(db.pool, "sftp-cut");
    root = mkdtempSync(path.join(tmpdir(), "clearline-sftp-cut-"));
    mkdirSync(path.join(root, "inbox"));
    mkdirSync(path.join(root, "archive"));
    const userKey = newKeyPair();
    const keyFile = path.join(root, "id_ecdsa");
    writeFileSync(keyFile, userKey.private, { mode: 0o600 });
    server = await startSftpServer(root, { name: "clearline", publicKey: userKey.public });
    proxy = await startFaultProxy({
      listen: { host: "127.0.0.1" }, target: { host: "127.0.0.1", port: server.port },
    });
    source = {
      tenant: "sftp-cut", partner: scene.partner.name, host: proxy.host, port: proxy.port,
      username: "clearline", privateKeyPath: keyFile, hostKeySha256: fingerprintOf(server.hostKey.public),
      inbox: "/inbox", namePattern: "\\.ach$", archive: "/archive", pollIntervalMs: 100,
    };
  });
  afterAll(async () => {
    await proxy.close();
    await server.close();
    await db.drop();
  });

  const poller = () => new SftpPoller({
    pool: db.pool, tenantId: scene.tenantId, partner: scene.partner, source,
    spoolFolder: mkdtempSync(path.join(tmpdir(), "clearline-spool-")), logger: quiet,
  });

  // A server gone silent (a half-open connection, its replies never arriving) is given up by the
  // keepalive; short timeouts keep the test's polls brief.
  const silentPoller = () => new SftpPoller({
    pool: db.pool, tenantId: scene.tenantId, partner: scene.partner, source,
    spoolFolder: mkdtempSync(path.join(tmpdir(), "clearline-spool-")), logger: quiet,
    timeouts: { operationMs: 2_000, keepaliveIntervalMs: 200 },
  });

  const cutStepBytes = 750;       // cut points: the handshake, listing, download and rename
  const cutLastBytes = 6_000;     // past the whole of a poll that takes the file

  for (const how of ["reset", "fin"] as const) {
    it(`settles every poll cut by a ${how} from the server; the file is taken once healed`,
      async () => {
      writeFileSync(path.join(root, "inbox", `cut-${how}.ach`), fixture("ach/original.ach"));
      const sftp = poller();
      for (let afterBytes = 0; afterBytes <= cutLastBytes; afterBytes += cutStepBytes) {
        proxy.cut({ direction: "toClient", afterBytes, how });
        await sftp.poll().catch(() => undefined);
        await proxy.heal();
      }
      while (readdirSync(path.join(root, "inbox")).length > 0) await sftp.poll();
      expect((await balances(db.pool, scene.tenantId))[settlementOf(scene)]).toBe(150_000n);
    });
  }

  // Found by the soak (seed 7): after a reset partition of the partner's server, a poll waited
  // about 90 s on a connection whose server side was gone, and the partner's files piled up.
  it("settles every poll whose server goes silent mid-poll; the file is taken once it answers again",
    async () => {
    writeFileSync(path.join(root, "inbox", "silent.ach"), fixture("ach/original.ach"));
    const sftp = silentPoller();
    for (const afterBytes of [1_500, 3_000, 4_500, 6_000]) {
      proxy.stall({ direction: "toClient", afterBytes });
      await sftp.poll().catch(() => undefined);
      await proxy.heal();
    }
    while (readdirSync(path.join(root, "inbox")).length > 0) await sftp.poll();
    expect((await balances(db.pool, scene.tenantId))[settlementOf(scene)]).toBe(150_000n);
  }, 120_000);

  // The keepalive ends a poll on a silent server; had it not (a server that answers keepalives
  // but nothing else), the soak's seed 7 saw /readyz say ready while the partner's files waited.
  it("is not ready while a poll waits past its bound in a network step, and ready once it ends",
    async () => {
    writeFileSync(path.join(root, "inbox", "stuck.ach"), fixture("ach/original.ach"));
    const sftp = new SftpPoller({
      pool: db.pool, tenantId: scene.tenantId, partner: scene.partner, source,
      spoolFolder: mkdtempSync(path.join(tmpdir(), "clearline-spool-")), logger: quiet,
      timeouts: { operationMs: 600_000, keepaliveIntervalMs: 600_000, stepStallMs: 300 },
    });
    proxy.stall({ direction: "toClient", afterBytes: 1_500 });
    sftp.start();
    await eventually(() => /a poll is stuck in \w+ for \d+ s/.test(sftp.health().reason ?? ""));
    await proxy.heal();
    // Ready again once a poll ends; the file is taken at the next listing that finds it stable.
    await eventually(() => sftp.health().ok);
    await eventually(() => !readdirSync(path.join(root, "inbox")).includes("stuck.ach"));
    expect(sftp.health()).toEqual({ ok: true });
    await sftp.stop();
  }, 120_000);
});
