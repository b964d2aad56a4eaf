import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fingerprintOf, newKeyPair } from "../../sftp-server.ts";
import type { HostProcess } from "../host-process.ts";
import type { TestHost } from "../test-host.ts";
import { spawnNodeInHost } from "./node-peer.ts";

export interface HostSftp {
  process: HostProcess;
  port: number;
  /** The folder the server serves: a partner's files are put in `<root>/<inbox>`. */
  root: string;
  user: string;
  privateKeyPath: string;          // the client's key, for `sftpPartners[].privateKeyPath`
  hostKeySha256: string;           // the server's, for `sftpPartners[].hostKeySha256`
}

// The host's own namespace: a fixed port collides with nothing of the machine.
const sftpPort = 2222;
const sftpUser = "partner";

/**
 * Starts a partner's SFTP server in `host`, serving `folder/root`; keys are made fresh and kept
 * in `folder` (the client's private key among them, for serve's configuration).
 */
export async function startSftpInHost(host: TestHost, folder: string): Promise<HostSftp> {
  const root = path.join(folder, "root");
  mkdirSync(root, { recursive: true });
  const client = newKeyPair();
  const server = newKeyPair();
  const file = (name: string, text: string) => {
    const at = path.join(folder, name);
    writeFileSync(at, text, { mode: 0o600 });
    return at;
  };
  const privateKeyPath = file("client.key", client.private);
  const started = spawnNodeInHost(host, "test/support/net/peers/sftp-peer.ts", [
    "--host", host.address, "--port", String(sftpPort), "--root", root, "--user", sftpUser,
    "--public-key-file", file("client.pub", client.public),
    "--host-key-file", file("host.key", server.private),
    "--host-public-key-file", file("host.pub", server.public)]);
  await started.waitForLine((line) => line.includes("\"listening\""), "listening");
  return {
    process: started, port: sftpPort, root, user: sftpUser, privateKeyPath,
    hostKeySha256: fingerprintOf(server.public),
  };
}
