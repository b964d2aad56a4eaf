import { mkdirSync } from "node:fs";
import path from "node:path";
import { startSftpInHost, type HostSftp } from "../support/net/peers/sftp-in-host.ts";
import {
  createTestHost, spawnNodeInHost, startEchoPeer, startFaultProxy, startNatsInHost, startPostgresInHost,
  type FaultProxy, type HostNats, type HostPostgres, type TestHost,
} from "../support/net/index.ts";

/**
 * Where the soak's peers run: each in a test host of its own (a network namespace behind a veth,
 * test/support/net), so a fault cuts one peer and leaves the others. `serve` reaches each through
 * a fault proxy on the host's root address (delays and stalls the kernel here cannot make); the
 * soak's own reads of the database go through PostgreSQL's unix socket, which no network fault
 * touches, so a check after a heal never trips on the checker's own broken connection.
 */
export interface Peer {
  name: PeerName;
  host: TestHost;
  proxy: FaultProxy;
}

export type PeerName = "postgres" | "nats" | "scheme" | "webhook" | "sftp";

export interface SoakTopology {
  peers: Record<PeerName, Peer>;
  postgres: HostPostgres;
  nats: HostNats;
  /** The partner's SFTP server; `serve` polls it through the sftp peer's proxy. */
  sftp: HostSftp;
  /** The admin URL of the host's PostgreSQL over its unix socket (the soak's own connections). */
  adminSocketUrl: string;
  /** The URL `serve` uses for `database`: through the proxy and the veth. */
  serviceDatabaseUrl(database: string): string;
  /** Environment for `serve`: NATS, the outbound scheme link. */
  serviceEnvironment: Record<string, string>;
  webhookUrl: string;
  remove(): Promise<void>;
}

const schemePort = 9583;

async function proxied(name: PeerName, host: TestHost, port: number): Promise<Peer> {
  const proxy = await startFaultProxy({ listen: { host: host.rootAddress, port: 0 }, target: { host: host.address, port } });
  return { name, host, proxy };
}

/** `folder`: where the SFTP server's files and keys live (the soak's home). */
export async function startTopology(folder: string): Promise<SoakTopology> {
  const made: TestHost[] = [];
  const proxies: FaultProxy[] = [];
  const host = async (label: string) => {
    const created = await createTestHost(label);
    made.push(created);
    return created;
  };
  try {
    const pgHost = await host("soak-pg");
    const postgres = await startPostgresInHost(pgHost);
    const natsHost = await host("soak-nats");
    const nats = await startNatsInHost(natsHost);
    const schemeHost = await host("soak-scheme");
    const scheme = spawnNodeInHost(schemeHost, "test/support/scheme-sim.ts",
      ["listen", "--host", schemeHost.address, "--port", String(schemePort), "--behaviour", "approve"]);
    await scheme.waitForLine((line) => line.includes("scheme-sim listening"), "listening");
    const webhookHost = await host("soak-hook");
    const echo = await startEchoPeer(webhookHost);
    const sftpHost = await host("soak-sftp");
    const sftpFolder = path.join(folder, "sftp");
    mkdirSync(sftpFolder, { recursive: true });
    const sftp = await startSftpInHost(sftpHost, sftpFolder);
    const peers: Record<PeerName, Peer> = {
      postgres: await proxied("postgres", pgHost, postgres.port),
      nats: await proxied("nats", natsHost, 4222),
      scheme: await proxied("scheme", schemeHost, schemePort),
      webhook: await proxied("webhook", webhookHost, echo.httpPort),
      sftp: await proxied("sftp", sftpHost, sftp.port),
    };
    proxies.push(...Object.values(peers).map((p) => p.proxy));
    const socketFolder = path.join(postgres.dataFolder, "data");
    const pgProxy = peers.postgres.proxy;
    return {
      peers, postgres, nats, sftp,
      adminSocketUrl: `postgres://postgres@localhost/postgres?host=${encodeURIComponent(socketFolder)}`,
      serviceDatabaseUrl: (database) => `postgres://postgres@${pgProxy.host}:${pgProxy.port}/${database}`,
      serviceEnvironment: {
        CLEARLINE_NATS_URL: `nats://${peers.nats.proxy.host}:${peers.nats.proxy.port}`,
        CLEARLINE_ISO8583_OUTBOUND_HOST: peers.scheme.proxy.host,
        CLEARLINE_ISO8583_OUTBOUND_PORT: String(peers.scheme.proxy.port),
        CLEARLINE_ISO8583_ACQUIRER_ID: "4761739",
      },
      webhookUrl: `http://${peers.webhook.proxy.host}:${peers.webhook.proxy.port}/echo`,
      async remove() {
        for (const proxy of proxies) await proxy.close().catch(() => undefined);
        await postgres.stop().catch(() => undefined);
        await nats.stop().catch(() => undefined);
        for (const h of made.reverse()) await h.remove().catch(() => undefined);
      },
    };
  } catch (error) {
    for (const proxy of proxies) await proxy.close().catch(() => undefined);
    for (const h of made.reverse()) await h.remove().catch(() => undefined);
    throw error;
  }
}
