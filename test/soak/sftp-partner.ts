import { readdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { originalFile } from "../sim/ach-files.ts";
import type { SimContext } from "../sim/context.ts";
import type { Violation } from "../sim/invariants.ts";
import { soakBounds } from "./bounds.ts";
import { covered } from "../sim/progress.ts";
import { nextIdempotencyKey } from "../sim/world.ts";
import type { SoakTopology } from "./topology.ts";

/**
 * The partner that delivers over SFTP: serve polls the soak's SFTP host (through its proxy) for
 * the world's partner, as `sftpPartners` in config.json. Files are written in the server's inbox
 * under a name the pattern does not take, then renamed, as a partner's upload completes.
 */
export const sftpInbox = "inbox";
export const sftpArchive = "archive";
const sftpNamePattern = "^sim-.*\\.ach$";
const sftpPollIntervalMs = 500;     // polled often: a soak's quiet gap is 1-4 s

/** The config.json of a soak's serve: one SFTP source for the world's tenant and partner. */
export function sftpPartnerConfig(topology: SoakTopology, tenantId: string, partner: string) {
  const proxy = topology.peers.sftp.proxy;
  return {
    sftpPartners: [{
      tenant: tenantId, partner, host: proxy.host, port: proxy.port, username: topology.sftp.user,
      privateKeyPath: topology.sftp.privateKeyPath, hostKeySha256: topology.sftp.hostKeySha256,
      inbox: sftpInbox, archive: sftpArchive, namePattern: sftpNamePattern,
      pollIntervalMs: sftpPollIntervalMs,
    }],
  };
}

/** Writes config.json into serve's home (read when serve starts). */
export function writeServeConfig(home: string, config: object): void {
  writeFileSync(path.join(home, "config.json"), `${JSON.stringify(config, null, 2)}\n`);
}

/**
 * The soak's action: the partner puts a new ACH file on its SFTP server. Nobody is told an
 * outcome; the recovery (inbox taken) and the file and money invariants hold serve to it.
 */
export function sftpFileDelivery(topology: SoakTopology) {
  return async (ctx: SimContext): Promise<void> => {
    const file = originalFile(ctx.world, ctx.rng, nextIdempotencyKey(ctx.world));
    const inbox = path.join(topology.sftp.root, sftpInbox);
    const partial = path.join(inbox, `.${file.name}.part`);
    writeFileSync(partial, file.bytes);
    renameSync(partial, path.join(inbox, file.name));
    covered(ctx.world, "files put on the SFTP server");
  };
}

/**
 * The files put in the SFTP inbox before `before` and still there (names the pattern takes); the
 * workload goes on putting files during a recovery, and a new one waits for its stable size.
 */
export function filesWaitingOnSftp(topology: SoakTopology, before: Date): string[] {
  const pattern = new RegExp(sftpNamePattern);
  const inbox = path.join(topology.sftp.root, sftpInbox);
  return readdirSync(inbox).filter((name) => {
    if (!pattern.test(name)) return false;
    try {
      return statSync(path.join(inbox, name)).mtimeMs < before.getTime();
    } catch {
      return false;    // taken between the listing and the look
    }
  });
}

/**
 * Before the checks of a quiet step: every file the partner put is taken. Serve polls SFTP on its
 * own clock, so a file taken while the checks read entries and then balances would move money
 * between the two reads (a false balancesReadEqualEntries, seen in a 30-minute run). The workload
 * waits while the checks run, so no new file comes; what is there must be taken within the bound.
 */
export async function sftpInboxTaken(topology: SoakTopology): Promise<Violation[]> {
  const deadline = Date.now() + soakBounds.recoveryBoundMs;
  for (;;) {
    const waiting = filesWaitingOnSftp(topology, new Date());
    if (waiting.length === 0) return [];
    if (Date.now() > deadline) {
      return [{ invariant: "sftpFilesTaken", subject: waiting.join(", "),
        expected: `taken off the SFTP server within ${soakBounds.recoveryBoundMs} ms`,
        found: "still there" }];
    }
    await new Promise((resolve) => setTimeout(resolve, soakBounds.probePauseMs));
  }
}
