import assert from "node:assert/strict";

/**
 * Every bound of the network-fault harness (test hosts, their faults, the fault proxy, the peers
 * run in hosts), named with its unit and why it has its value. These bound the TEST harness, not
 * the service (the service's own limits live in src/config/limits/).
 */
export const netBounds = {
  // An `ip`, `nft` or `tc` call answers in milliseconds; a minute on a loaded machine is a hang.
  commandTimeoutMs: 60_000,
  // `ip -j` / `nft -j` of a machine with a few hundred links and rules is well under 1 MiB.
  commandOutputBytesMax: 8_388_608,
  // apt-get update + install nftables on a fresh CI machine, behind other apt users' locks.
  packageInstallTimeoutMs: 600_000,
  // Concurrent runs installing at once wait for dpkg's lock instead of failing.
  aptLockWaitSeconds: 300,
  // /30 subnets in 10.213.0.0/16, the harness's private range.
  subnetsInRange: 16_384,
  // Candidate subnets tried per host; 64 taken or colliding in a row is a machine to look at.
  subnetClaimAttemptsMax: 64,
  // Test hosts one process holds at once; a soak needs one per peer, a leak shows here.
  hostsPerProcessMax: 256,
  // A peer asked to stop gets this long before SIGKILL (PostgreSQL's fast shutdown: < 1 s).
  processStopGraceMs: 30_000,
  // The tail of a peer's output kept for error messages (a failed start prints why).
  processOutputLinesMax: 200,
  // One kept line; longer lines are cut, so the tail stays bounded in bytes.
  processOutputLineCharsMax: 4_096,
  // Waits for a counter or a vanished link re-read the kernel's state this often: the kernel
  // sends no event for these.
  rulesetPollIntervalMs: 20,
  // A backend whose client vanished ends within keepalive idle + interval x count after a heal;
  // a minute without that is a hang.
  orphanSessionWaitMs: 60_000,
  // Open connections through one fault proxy; past it a new connection is reset and counted.
  proxyConnectionsMax: 256,
  // Bytes one direction of one proxied connection holds (delayed or stalled) before the proxy
  // stops reading that direction's source.
  proxyQueuedBytesMax: 1_048_576,
  // A per-chunk delay longer than ten minutes is a typo, not a fault.
  proxyDelayMsMax: 600_000,
  // How long a packet may wait in a narrow link's queue before tbf drops it: congested, not dead.
  tbfLatencyMs: 400,
  // tbf takes less, but below 1 kB/s every handshake becomes a timeout.
  tbfRateBitsPerSecondMin: 8_000,
  // A host PostgreSQL notices a vanished client soon after a heal, so the transaction of an
  // unknown COMMIT ends (committed or rolled back) instead of holding its locks.
  postgresKeepaliveIdleSeconds: 2,
  postgresKeepaliveIntervalSeconds: 1,
  postgresKeepaliveCount: 3,
} as const;

assert(netBounds.subnetsInRange === 2 ** (30 - 16), "a /16 holds 2^14 /30 subnets");
assert(netBounds.subnetClaimAttemptsMax <= netBounds.subnetsInRange);
assert(netBounds.proxyQueuedBytesMax >= 65_536, "a queue must hold at least one socket read");

/**
 * Bounds of the harness's self-tests (test/net/): the clients' own timeouts. A faulted request is
 * given up by its client after these, as a real client would; the tests never wait on a clock of
 * their own.
 */
export const netTestBounds = {
  // A connect or answer through a silent partition: long enough that a healthy one on a loaded
  // machine is not mistaken for it (the tests read the rule's counter too).
  faultedClientTimeoutMs: 1_000,
  // A connect or answer that must succeed; a loaded 2-core machine answers in milliseconds.
  healthyClientTimeoutMs: 60_000,
  // Request/responses under random loss: that a 30% loss hits none of their ~1,200 packets is
  // out of reach.
  lossExchanges: 300,
  // 10 exchanges each, in parallel: each waits at most faultedClientTimeoutMs, so seconds in all.
  lossConnections: 30,
  lossPercent: 30,
  // 1 MB/s: the transfer takes about 2 s, long against the burst.
  narrowLinkRateBitsPerSecond: 8_000_000,
  narrowLinkBurstBytes: 16_384,
  narrowLinkTransferBytes: 2_097_152,
} as const;
