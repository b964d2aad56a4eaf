import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";

/**
 * A TCP proxy in front of PostgreSQL that, once armed, cuts the connection whose server answers
 * COMMIT, dropping that answer: the server committed, the client never hears it. This is what a
 * primary dying (or a proxy cutting the session) right after a commit looks like to clearline.
 */
export interface CommitCutProxy {
  url: string;
  /**
   * Cuts the next connection whose answer holds COMMIT's CommandComplete ("COMMIT\0"); with
   * `thenDown`, every connection after the cut is refused until heal() (the primary is gone).
   */
  armCutAfterCommit(options?: { thenDown?: boolean }): void;
  heal(): void;
  /** Connections cut so far. */
  readonly cuts: number;
  close(): Promise<void>;
}

const commitComplete = Buffer.from("COMMIT\u0000");

export async function startCommitCutProxy(targetUrl: string): Promise<CommitCutProxy> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  let armed = false;
  let downAfterCut = false;
  let down = false;
  let cuts = 0;
  const server: Server = createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => undefined);
      socket.on("close", () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on("data", (chunk: Buffer) => upstream.write(chunk));
    upstream.on("data", (chunk: Buffer) => {
      if (armed && chunk.includes(commitComplete)) {
        armed = false;
        down = downAfterCut;
        cuts += 1;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = new URL(targetUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    armCutAfterCommit(options = {}) {
      armed = true;
      downAfterCut = options.thenDown ?? false;
    },
    heal() {
      down = false;
    },
    get cuts() {
      return cuts;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
