// The HA test cluster's front door, for tests and for main.ts (`npm run ha -- ...`).
export { down, clusterPids, type DownResult } from "./down.ts";
export { killPrimary, restartNode, type KilledPrimary } from "./failover.ts";
export {
  allPorts,
  defaultPortBase,
  layoutOf,
  nodeUrl,
  primaryUrl,
  readState,
  replicaUrl,
  stateFilePath,
  type ClusterState,
  type NodeCount,
} from "./layout.ts";
export { haLimits } from "./limits.ts";
export { formatStatus, memberStatuses, type MemberStatus } from "./members.ts";
export { portIsFree, queryOnce, waitFor } from "./probes.ts";
export { processesMatching } from "./processes.ts";
export { waitMemberStreaming } from "./ready.ts";
export { up, type UpResult } from "./up.ts";
