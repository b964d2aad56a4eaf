// Sends POST requests from its own thread, so the load generator's JSON and socket work does not
// share an event loop with the server under test. Plain JavaScript: it runs without a loader.
import { parentPort, workerData } from "node:worker_threads";

const { url, headers, bodies, keys, concurrency, expectStatus, expectReplay } = workerData;
let next = 0;
const latenciesMs = [];
let failure;

async function worker() {
  while (next < bodies.length && !failure) {
    const i = next++;
    const started = performance.now();
    const response = await fetch(url, { method: "POST", headers: { ...headers, "idempotency-key": keys[i] }, body: bodies[i] });
    await response.arrayBuffer();
    latenciesMs.push(performance.now() - started);
    const replayed = response.headers.get("idempotent-replayed") === "true";
    if (response.status !== expectStatus || replayed !== expectReplay) failure = `request ${i}: status ${response.status}, replayed ${replayed}`;
  }
}

const started = performance.now();
await Promise.all(Array.from({ length: concurrency }, worker));
const seconds = (performance.now() - started) / 1000;
parentPort.postMessage({ opsPerSecond: bodies.length / seconds, latenciesMs, failure });
