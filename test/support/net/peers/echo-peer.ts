import { createSocket } from "node:dgram";
import { once } from "node:events";
import { createServer as createHttpServer, type ServerResponse } from "node:http";
import { connect, createServer as createTcpServer } from "node:net";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";

/**
 * A plain peer for a test host (run in its namespace by peers/node-peer.ts): a TCP echo, an
 * HTTP server (GET /bytes?count=N answers N bytes; POST /echo answers its body) and a UDP socket
 * that reports each datagram it receives. Told on stdin, it sends a datagram or opens a TCP
 * connection of its own. It speaks on stdout in JSON lines, one event each, so a test waits for
 * events, not for time.
 */
const { values } = parseArgs({ options: {
  host: { type: "string" },
  "tcp-port": { type: "string", default: "7000" },
  "http-port": { type: "string", default: "8080" },
  "udp-port": { type: "string", default: "7001" },
} });
const host = values.host;
if (!host) throw new Error("--host is required: the test host's address");
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);
const transferChunkBytes = 65_536;          // GET /bytes writes chunks of this, with backpressure
const transferBytesMax = 1_073_741_824;     // a GET /bytes of more than 1 GiB is a typo

function sendBytes(response: ServerResponse, count: number): void {
  response.writeHead(200, { "content-length": String(count) });
  let left = count;
  const writeMore = (): void => {
    while (left > 0) {
      const chunk = Buffer.alloc(Math.min(left, transferChunkBytes), 0x61);
      left -= chunk.length;
      if (!response.write(chunk)) return void response.once("drain", writeMore);
    }
    response.end();
  };
  writeMore();
}

const tcp = createTcpServer((socket) => {
  socket.on("error", () => undefined);      // a fault resets it; the client's side is under test
  socket.pipe(socket);
});
const http = createHttpServer((request, response) => {
  const url = new URL(request.url ?? "/", "http://peer");
  if (request.method === "GET" && url.pathname === "/bytes") {
    const count = Number(url.searchParams.get("count"));
    const valid = Number.isInteger(count) && count >= 0 && count <= transferBytesMax;
    return valid ? sendBytes(response, count) : void response.writeHead(400).end();
  }
  if (request.method === "POST" && url.pathname === "/echo") return void request.pipe(response);
  response.writeHead(404).end();
});
const udp = createSocket("udp4");
udp.on("message", (message, from) =>
  say({ event: "udp-received", text: message.toString(), from: from.address }));

tcp.listen(Number(values["tcp-port"]), host);
http.listen(Number(values["http-port"]), host);
udp.bind(Number(values["udp-port"]), host);
await Promise.all([once(tcp, "listening"), once(http, "listening"), once(udp, "listening")]);

interface Command { command: string; host: string; port: number; text: string }

/** Connects to host:port and reports how it went (the host's own side of a fault). */
function tcpConnect({ host, port, text }: Command): void {
  const socket = connect({ host, port });
  socket.once("connect", () => {
    say({ event: "tcp-connect", text, outcome: "ok" });
    socket.destroy();
  });
  socket.once("error", (error: NodeJS.ErrnoException) =>
    say({ event: "tcp-connect", text, outcome: error.code ?? error.message }));
}

createInterface({ input: process.stdin }).on("line", (line) => {
  const command = JSON.parse(line) as Command;
  if (command.command === "tcp-connect") return tcpConnect(command);
  if (command.command !== "udp-send") return say({ event: "unknown-command", line });
  udp.send(command.text, command.port, command.host, (error) =>
    say({ event: "udp-sent", text: command.text, error: error?.message ?? null }));
});
say({ event: "listening", host });
process.once("SIGTERM", () => process.exit(0));
