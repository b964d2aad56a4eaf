import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { tempFolderPrefix } from "../host-names.ts";
import type { HostProcess } from "../host-process.ts";
import { NetworkHarnessUnavailable } from "../prerequisites.ts";
import type { TestHost } from "../test-host.ts";

/**
 * A NATS server with JetStream of its own in a test host (the machine's nats-server binary;
 * CLEARLINE_NET_NATS_SERVER names another), its store in a temp folder, listening on the host's
 * address only. The stock server on 127.0.0.1:4222 is never touched.
 */
export interface HostNats {
  url: string;
  process: HostProcess;
  stop(): Promise<void>;
}

const natsPort = 4222;           // the host's own namespace: the stock server's port is free there

export async function startNatsInHost(host: TestHost): Promise<HostNats> {
  const binary = process.env.CLEARLINE_NET_NATS_SERVER ?? "/usr/sbin/nats-server";
  if (!existsSync(binary)) {
    throw new NetworkHarnessUnavailable(
      `no nats-server at ${binary}: install it, or set CLEARLINE_NET_NATS_SERVER`);
  }
  const store = mkdtempSync(path.join(tmpdir(), `${tempFolderPrefix}${process.pid}-nats-`));
  const args = ["-js", "-a", host.address, "-p", String(natsPort), "-sd", store];
  const server = host.spawn(binary, args, { label: `NATS in ${host.label}` });
  await server.waitForLine((line) => line.includes("Server is ready"), "ready");
  return {
    url: `nats://${host.address}:${natsPort}`,
    process: server,
    async stop() {
      await server.stop();
      rmSync(store, { recursive: true, force: true });
    },
  };
}
