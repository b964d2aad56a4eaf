// The network-fault harness: test hosts in network namespaces, their faults, the fault proxy and
// the peers that run in hosts. docs/operations/network-faults.md tells how to use it.
export { netBounds } from "./bounds.ts";
export { createTestHost, linkExists, type TestHost } from "./test-host.ts";
export { faultRulesIn, loss, narrowLink, partition, type Direction, type HostFault,
  type LinkFault, type RuleFault } from "./host-faults.ts";
export { startFaultProxy, type FaultProxy, type ProxyCounts, type ProxyDirection }
  from "./fault-proxy.ts";
export { NetworkHarnessUnavailable, requireNetworkHarness } from "./prerequisites.ts";
export { sweepStaleHosts } from "./stale-hosts.ts";
export type { HostProcess } from "./host-process.ts";
export { spawnNodeInHost, startEchoPeer, type EchoPeer } from "./peers/node-peer.ts";
export { startPostgresInHost, type HostPostgres } from "./peers/postgres-peer.ts";
export { startNatsInHost, type HostNats } from "./peers/nats-peer.ts";
