// Sends POST requests from its own thread, so the load generator's work does not share an event
// loop with the server under test. Plain JavaScript: it runs without a loader.
//
// The client is a minimal HTTP/1.1 keep-alive client over node:net (one connection per client,
// one request in flight on each, as fetch's pool did), in the manner of wrk or autocannon: the
// load generator shares this 2-core machine with the server and PostgreSQL, and undici's fetch
// cost about 0.5-0.75 ms of CPU per request here, more than the server spent answering a replay.
// The request bytes are the same (method, path, headers, body); every response is read in full
// and its status and Idempotent-Replayed header are checked, as before.
//
// One worker serves every load of a benchmark run, one job at a time (a message in, a result
// out), as a load generator runs warm: a worker started for each load ran its client code cold,
// which cost a short fast load (1,000 replays in a fifth of a second) about a quarter of its rate
// (4,398 against 5,856 replays/s in two runs a minute apart; docs/decisions/0054).
import net from "node:net";
import { parentPort } from "node:worker_threads";

const HEADER_END = Buffer.from("\r\n\r\n");

/** Reads one response from the connection's buffered bytes: { status, headers, rest } once complete, else undefined. */
function parseResponse(buffer) {
  const end = buffer.indexOf(HEADER_END);
  if (end < 0) return undefined;
  const lines = buffer.subarray(0, end).toString("latin1").split("\r\n");
  const status = Number(lines[0].split(" ")[1]);
  const fields = new Map();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    fields.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  if (fields.has("transfer-encoding")) throw new Error(`response ${status}: chunked bodies are not read by this client`);
  const bodyBytes = Number(fields.get("content-length") ?? "0");
  if (buffer.length < end + 4 + bodyBytes) return undefined;
  return { status, fields, rest: buffer.subarray(end + 4 + bodyBytes) };
}

/** One load: `concurrency` clients send `bodies` with their `keys`, each response checked. */
async function runLoad({ url, headers, bodies, keys, concurrency, expectStatus, expectReplay }) {
  const target = new URL(url);
  const head = [`POST ${target.pathname}${target.search} HTTP/1.1`, `host: ${target.host}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)].join("\r\n");
  let next = 0;
  const latenciesMs = [];
  let failure;

  /** A keep-alive connection whose received bytes accumulate in `buffer`; `wait()` resolves at the next chunk, error or close. */
  function connection() {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: target.hostname, port: Number(target.port), noDelay: true });
      const state = { socket, buffer: Buffer.alloc(0), wake: undefined };
      const wake = () => { const resume = state.wake; state.wake = undefined; if (resume) resume(); };
      socket.on("data", (chunk) => { state.buffer = state.buffer.length === 0 ? chunk : Buffer.concat([state.buffer, chunk]); wake(); });
      socket.on("error", (error) => { failure ??= String(error); wake(); });
      socket.on("close", wake);
      state.wait = () => new Promise((resume) => { state.wake = resume; });
      socket.once("connect", () => resolve(state));
      socket.once("error", reject);
    });
  }

  /** One client: a keep-alive connection sending the next request once the previous response arrived. */
  async function client() {
    let conn = await connection();
    while (next < bodies.length && !failure) {
      const i = next++;
      const started = performance.now();
      conn.socket.write(`${head}\r\nidempotency-key: ${keys[i]}\r\ncontent-length: ${Buffer.byteLength(bodies[i])}\r\n\r\n${bodies[i]}`);
      let response;
      while (!(response = parseResponse(conn.buffer)) && !failure) {
        if (conn.socket.destroyed) { failure = `request ${i}: the server closed the connection`; break; }
        await conn.wait();
      }
      if (!response) break;
      conn.buffer = response.rest;
      latenciesMs.push(performance.now() - started);
      const replayed = response.fields.get("idempotent-replayed") === "true";
      if (response.status !== expectStatus || replayed !== expectReplay) failure = `request ${i}: status ${response.status}, replayed ${replayed}`;
      if (response.fields.get("connection") === "close") {
        conn.socket.destroy();
        conn = await connection();
      }
    }
    conn.socket.destroy();
  }

  const started = performance.now();
  try {
    await Promise.all(Array.from({ length: concurrency }, client));
  } catch (error) {
    failure ??= String(error);
  }
  const seconds = (performance.now() - started) / 1000;
  return { opsPerSecond: bodies.length / seconds, latenciesMs, failure };
}

// Jobs come one at a time; the benchmark closes the worker when its run ends.
parentPort.on("message", (job) => {
  runLoad(job).then((result) => parentPort.postMessage(result), (error) => parentPort.postMessage({ failure: String(error) }));
});
