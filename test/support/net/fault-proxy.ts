import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { netBounds } from "./bounds.ts";

/**
 * A TCP proxy in the test harness for the faults the kernel here cannot make (it has no netem):
 * delay per chunk, a stall mid-frame (bytes held until heal), a cut after N bytes with a reset or
 * a FIN, and refused connections. Placed on a peer's path (listening on a test host's root
 * address, forwarding to the host), it sees every byte between `serve` and the peer.
 *
 * Directions: `toTarget` is what clients send, `toClient` what the target answers. Each direction
 * of each connection holds at most `queuedBytesMax` (delayed or stalled); past it the proxy stops
 * reading that direction's source until it drains, so memory stays bounded and TCP flow control
 * pushes back on the sender, as a stalled network path does.
 */
export type ProxyDirection = "toTarget" | "toClient";
export type CloseKind = "reset" | "fin";

export interface ProxyCounts {
  connectionsAccepted: number;
  connectionsOpen: number;
  connectionsRefused: number;   // refused while refusing, or reset past connectionsMax
  connectionsCut: number;
  bytesToTarget: number;        // forwarded, not merely received
  bytesToClient: number;
  bytesHeld: number;            // received and not yet forwarded, over all open connections
  chunksDelayed: number;
  sourcePauses: number;         // times a direction reached queuedBytesMax and stopped reading
}

export interface FaultProxyOptions {
  listen: { host: string; port?: number };
  target: { host: string; port: number };
  connectionsMax?: number;
  queuedBytesMax?: number;
}

export interface FaultProxy {
  host: string;
  port: number;
  counts(): ProxyCounts;
  /** Holds each chunk of `direction` for delayMs before forwarding it (order kept). */
  delay(options: { direction: ProxyDirection | "both"; delayMs: number }): void;
  /** Forwards afterBytes more bytes of `direction` per connection, then holds the rest (heal). */
  stall(options: { direction: ProxyDirection; afterBytes: number }): void;
  /** Forwards afterBytes more bytes of `direction` per connection, then closes both sides. */
  cut(options: { direction: ProxyDirection; afterBytes: number; how: CloseKind }): void;
  /** Stops listening: new connections are refused (ECONNREFUSED); open ones go on. */
  refuseConnections(): Promise<void>;
  /** Ends every fault: held bytes flow, new connections are accepted again. */
  heal(): Promise<void>;
  /** Resolves once `holds` is true of the counts, checked after every change (an event). */
  until(holds: (counts: ProxyCounts) => boolean): Promise<void>;
  close(): Promise<void>;
}

interface DirectionFaults {
  delayMs: number;
  stallAfterBytes: number | undefined;
  cut: { afterBytes: number; how: CloseKind } | undefined;
}

interface Shared {
  counts: Omit<ProxyCounts, "bytesHeld" | "connectionsOpen">;
  faults: Record<ProxyDirection, DirectionFaults>;
  queuedBytesMax: number;
  changed(): void;
}

/** One direction of one connection: reads `source`, queues, forwards to `destination`. */
class Pipe {
  private readonly queue: { chunk: Buffer; releaseAtMs: number }[] = [];
  queuedBytes = 0;
  forwardedBytes = 0;
  stallAtBytes: number | undefined;
  cutAt: { bytes: number; how: CloseKind } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private waitingForDrain = false;
  private sourceEnded = false;
  private destinationEnded = false;
  private closed = false;

  constructor(readonly direction: ProxyDirection, private readonly source: Socket,
    private readonly destination: Socket, private readonly shared: Shared,
    private readonly onCut: (how: CloseKind) => void) {
    const faults = shared.faults[direction];
    if (faults.stallAfterBytes !== undefined) this.stallAtBytes = faults.stallAfterBytes;
    if (faults.cut) this.cutAt = { bytes: faults.cut.afterBytes, how: faults.cut.how };
    source.on("data", (chunk: Buffer) => this.receive(chunk));
    source.on("end", () => { this.sourceEnded = true; this.pump(); });
    destination.on("drain", () => { this.waitingForDrain = false; this.pump(); });
  }

  private receive(chunk: Buffer): void {
    if (this.closed) return;                 // after a cut with a FIN, the peer's bytes are dropped
    const delayMs = this.shared.faults[this.direction].delayMs;
    if (delayMs > 0) this.shared.counts.chunksDelayed += 1;
    this.queue.push({ chunk, releaseAtMs: performance.now() + delayMs });
    this.queuedBytes += chunk.length;
    if (this.queuedBytes >= this.shared.queuedBytesMax && !this.source.isPaused()) {
      this.source.pause();
      this.shared.counts.sourcePauses += 1;
    }
    this.pump();
  }

  /** Ends the stall and the delay of what is queued (heal). */
  release(): void {
    this.stallAtBytes = undefined;
    this.cutAt = undefined;
    for (const item of this.queue) item.releaseAtMs = 0;
    this.pump();
  }

  /** Forwards nothing more; what the source still sends is read and dropped, so it can end. */
  stop(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.queue.length = 0;
    this.queuedBytes = 0;
    if (this.source.isPaused()) this.source.resume();
  }

  pump(): void {
    if (this.closed || this.waitingForDrain) return;
    clearTimeout(this.timer);
    if (this.cutAt && this.forwardedBytes >= this.cutAt.bytes) return this.onCut(this.cutAt.how);
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      const waitMs = head.releaseAtMs - performance.now();
      if (waitMs > 0) { this.timer = setTimeout(() => this.pump(), Math.ceil(waitMs)); break; }
      const stopAtBytes = Math.min(this.stallAtBytes ?? Infinity, this.cutAt?.bytes ?? Infinity);
      const limit = stopAtBytes - this.forwardedBytes;
      if (limit <= 0) break;                                   // stalled mid-stream until heal
      const piece = head.chunk.length <= limit ? head.chunk : head.chunk.subarray(0, limit);
      if (piece === head.chunk) this.queue.shift(); else head.chunk = head.chunk.subarray(limit);
      this.queuedBytes -= piece.length;
      this.forwardedBytes += piece.length;
      const counter = this.direction === "toTarget" ? "bytesToTarget" : "bytesToClient";
      this.shared.counts[counter] += piece.length;
      const cut = this.cutAt && this.forwardedBytes >= this.cutAt.bytes ? this.cutAt : undefined;
      // A reset discards what the kernel has not sent yet: cut only once the last piece is written.
      const flushed = this.destination.write(piece, cut ? () => this.onCut(cut.how) : undefined);
      if (cut) return this.shared.changed();
      if (!flushed) { this.waitingForDrain = true; break; }
    }
    const roomInQueue = this.queuedBytes < this.shared.queuedBytesMax;
    if (roomInQueue && this.source.isPaused()) this.source.resume();
    if (this.queue.length === 0 && this.sourceEnded && !this.destinationEnded) {
      this.destinationEnded = true;
      this.destination.end();
    }
    this.shared.changed();
  }
}

/** A client connection and its connection to the target, as two pipes. */
class ProxiedConnection {
  readonly pipes: Record<ProxyDirection, Pipe>;
  private cut = false;

  constructor(readonly client: Socket, readonly target: Socket, private readonly shared: Shared,
    onClosed: () => void) {
    const cutBoth = (how: CloseKind) => this.cutBoth(how);
    this.pipes = {
      toTarget: new Pipe("toTarget", client, target, shared, cutBoth),
      toClient: new Pipe("toClient", target, client, shared, cutBoth),
    };
    // One side's reset is passed on as a reset; one side's FIN as a FIN (by the pipes).
    for (const [socket, other] of [[client, target], [target, client]] as const) {
      socket.on("error", () => {
        this.stopPipes();
        if (!other.destroyed) other.resetAndDestroy();
      });
    }
    // A closed socket takes nothing more; what was read from it and is still queued (a delayed
    // last answer) goes on to the other side.
    let open = 2;
    const intoEach = [[client, this.pipes.toClient], [target, this.pipes.toTarget]] as const;
    for (const [socket, into] of intoEach) {
      socket.once("close", () => {
        into.stop();
        open -= 1;
        if (open === 0) onClosed();
      });
    }
  }

  private stopPipes(): void {
    this.pipes.toTarget.stop();
    this.pipes.toClient.stop();
  }

  cutBoth(how: CloseKind): void {
    if (this.cut) return;
    this.cut = true;
    this.stopPipes();
    this.shared.counts.connectionsCut += 1;
    // A FIN closes our sending side only: the other end may still send (read and dropped) and
    // closes when it ends too, as after a peer's orderly close.
    for (const socket of [this.client, this.target]) {
      if (how === "reset") socket.resetAndDestroy();
      else socket.end();
    }
    this.shared.changed();
  }
}

const noFaults = (): DirectionFaults =>
  ({ delayMs: 0, stallAfterBytes: undefined, cut: undefined });

function newShared(queuedBytesMax: number, events: EventEmitter): Shared {
  return {
    counts: { connectionsAccepted: 0, connectionsRefused: 0, connectionsCut: 0, bytesToTarget: 0,
      bytesToClient: 0, chunksDelayed: 0, sourcePauses: 0 },
    faults: { toTarget: noFaults(), toClient: noFaults() },
    queuedBytesMax,
    changed: () => events.emit("change"),
  };
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port }, () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const connectionsMax = options.connectionsMax ?? netBounds.proxyConnectionsMax;
  const queuedBytesMax = options.queuedBytesMax ?? netBounds.proxyQueuedBytesMax;
  assert(connectionsMax >= 1 && connectionsMax <= netBounds.proxyConnectionsMax);
  assert(queuedBytesMax >= 1 && queuedBytesMax <= netBounds.proxyQueuedBytesMax);
  const events = new EventEmitter();
  const shared = newShared(queuedBytesMax, events);
  const connections = new Set<ProxiedConnection>();
  const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (client) => {
    if (connections.size >= connectionsMax) {
      shared.counts.connectionsRefused += 1;
      client.resetAndDestroy();
      return shared.changed();
    }
    shared.counts.connectionsAccepted += 1;
    const { host, port } = options.target;
    const target = connect({ host, port, allowHalfOpen: true });
    const connection = new ProxiedConnection(client, target, shared, () => {
      connections.delete(connection);
      shared.changed();
    });
    connections.add(connection);
    client.resume();
    shared.changed();
  });
  const port = await listen(server, options.listen.host, options.listen.port ?? 0);
  return proxyOf(server, options.listen.host, port, shared, connections, events);
}

function proxyOf(server: Server, host: string, port: number, shared: Shared,
  connections: Set<ProxiedConnection>, events: EventEmitter): FaultProxy {
  const directions = (d: ProxyDirection | "both"): ProxyDirection[] =>
    d === "both" ? ["toTarget", "toClient"] : [d];
  const pipesOf = (direction: ProxyDirection) => [...connections].map((c) => c.pipes[direction]);
  let refusing = false;
  const counts = (): ProxyCounts => ({
    ...shared.counts,
    connectionsOpen: connections.size,
    bytesHeld: [...connections].reduce((sum, c) =>
      sum + c.pipes.toTarget.queuedBytes + c.pipes.toClient.queuedBytes, 0),
  });
  return {
    host, port, counts,
    delay({ direction, delayMs }) {
      const inBound = delayMs >= 0 && delayMs <= netBounds.proxyDelayMsMax;
      assert(inBound, `delay ${delayMs} ms is out of bound`);
      for (const d of directions(direction)) shared.faults[d].delayMs = delayMs;
    },
    stall({ direction, afterBytes }) {
      assert(afterBytes >= 0);
      shared.faults[direction].stallAfterBytes = afterBytes;
      for (const pipe of pipesOf(direction)) pipe.stallAtBytes = pipe.forwardedBytes + afterBytes;
    },
    cut({ direction, afterBytes, how }) {
      assert(afterBytes >= 0);
      shared.faults[direction].cut = { afterBytes, how };
      for (const pipe of pipesOf(direction)) {
        pipe.cutAt = { bytes: pipe.forwardedBytes + afterBytes, how };
        pipe.pump();
      }
    },
    async refuseConnections() {
      if (refusing) return;
      refusing = true;
      server.close();            // the listening socket goes now; open connections stay
    },
    async heal() {
      for (const d of directions("both")) shared.faults[d] = noFaults();
      for (const c of connections) { c.pipes.toTarget.release(); c.pipes.toClient.release(); }
      if (refusing) { await listen(server, host, port); refusing = false; }
    },
    until(holds) {
      if (holds(counts())) return Promise.resolve();
      return new Promise((resolve) => {
        const check = () => { if (holds(counts())) { events.off("change", check); resolve(); } };
        events.on("change", check);
      });
    },
    async close() {
      for (const c of connections) { c.client.destroy(); c.target.destroy(); }
      if (!refusing) await new Promise<void>((resolve) => server.close(() => resolve()));
      refusing = true;
    },
  };
}
