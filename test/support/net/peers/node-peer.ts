import { fileURLToPath } from "node:url";
import type { HostProcess, HostProcessOptions } from "../host-process.ts";
import type { TestHost } from "../test-host.ts";

/** The repository root: node scripts run from it so `--import tsx` and relative imports resolve. */
export const repositoryRoot = fileURLToPath(new URL("../../../../", import.meta.url));

/**
 * Runs a TypeScript (or JavaScript) file with this process's node in a test host: the scheme
 * simulator, an SFTP server or a webhook receiver entry point, given the host's address to
 * listen on. `clearline` itself: spawnNodeInHost(host, "src/cli/clearline.mjs", [...]).
 */
export function spawnNodeInHost(host: TestHost, script: string, args: string[],
  options: HostProcessOptions = {}): HostProcess {
  return host.spawn(process.execPath, ["--import", "tsx", script, ...args],
    { cwd: repositoryRoot, label: `${script} in ${host.label}`, ...options });
}

export interface EchoPeer {
  process: HostProcess;
  host: string;
  tcpPort: number;
  httpPort: number;
  udpPort: number;
  /** Tells the peer to send one UDP datagram (from its UDP port) and waits until it did. */
  sendUdp(to: { host: string; port: number }, text: string): Promise<void>;
  /** Has the peer connect to `to` over TCP (text names the attempt); resolves with "ok" or the
   * error code its connect got (a host-side fault is seen from the host). */
  connectFromHost(to: { host: string; port: number }, text: string): Promise<string>;
  /** Waits until the peer reports a datagram with this text; resolves with every text it
   * reported, in order. */
  receivedUdp(text: string): Promise<string[]>;
}

interface PeerEvent { event: string; text?: string; error?: string | null; outcome?: string }

const eventOf = (line: string): PeerEvent | undefined =>
  line.startsWith("{") ? JSON.parse(line) as PeerEvent : undefined;

// The host's own namespace: fixed ports never collide with anything of the machine.
const peerPorts = { tcpPort: 7000, httpPort: 8080, udpPort: 7001 } as const;

/** Starts peers/echo-peer.ts in a host and resolves once all its sockets listen. */
export async function startEchoPeer(host: TestHost): Promise<EchoPeer> {
  const started = spawnNodeInHost(host, "test/support/net/peers/echo-peer.ts", [
    "--host", host.address, "--tcp-port", String(peerPorts.tcpPort),
    "--http-port", String(peerPorts.httpPort), "--udp-port", String(peerPorts.udpPort)]);
  await started.waitForLine((line) => eventOf(line)?.event === "listening", "listening");
  const isEvent = (event: string, text: string) => (line: string) =>
    eventOf(line)?.event === event && eventOf(line)?.text === text;
  return {
    process: started, host: host.address, ...peerPorts,
    async sendUdp(to, text) {
      started.send(JSON.stringify({ command: "udp-send", host: to.host, port: to.port, text }));
      const line = await started.waitForLine(isEvent("udp-sent", text), `sending ${text}`);
      const error = eventOf(line)?.error;
      if (error) throw new Error(`the peer could not send ${text}: ${error}`);
    },
    async connectFromHost(to, text) {
      started.send(JSON.stringify({ command: "tcp-connect", host: to.host, port: to.port, text }));
      const line = await started.waitForLine(isEvent("tcp-connect", text), `connecting ${text}`);
      return eventOf(line)?.outcome ?? "no outcome";
    },
    async receivedUdp(text) {
      await started.waitForLine(isEvent("udp-received", text), `receiving ${text}`);
      return started.output().flatMap((line) => {
        const event = eventOf(line);
        return event?.event === "udp-received" ? [event.text ?? ""] : [];
      });
    },
  };
}
