// Bounds of the HA test cluster tool. Every wait polls for an event and gives up at its bound
// with a message naming what did not happen; none of them is a delay of its own.
export const haLimits = {
  // etcd answers /health within a second on a quiet machine; 30 s covers a loaded 2-core one.
  etcdReadyMs: 30_000,
  // From the first Patroni start to a writable primary with every standby streaming: initdb,
  // two base backups and the synchronous standby pick took 15-25 s on a 2-core machine.
  clusterReadyMs: 180_000,
  // A restarted node rewinds (or re-clones) and streams again: a few seconds to a minute.
  nodeRejoinMs: 180_000,
  // down sends SIGKILL until no process of the cluster is left: gone in well under a second;
  // longer only if something keeps starting processes again (a Patroni missed by every look).
  everythingGoneMs: 20_000,
  // One probe (an HTTP GET or a connection and query) must not hang a wait past its bound.
  probeTimeoutMs: 3_000,
  // Between two probes of a wait: short enough to time a failover to about a tenth of a second.
  pollIntervalMs: 100,
  // Lines of a log shown when something did not come up.
  logTailLines: 40,
  // A Unix socket path longer than this is refused by the kernel (sun_path is 108 bytes).
  socketPathBytesMax: 107,
} as const;
