import path from "node:path";
import {
  postgresBinDir,
  replicationUserName,
  superuserName,
  type ClusterLayout,
  type NodeLayout,
} from "./layout.ts";

/**
 * The configuration files of the HA test cluster. The reasons for each value are in
 * docs/operations/ha-cluster.md and decision 0060.
 */

// Failover timing (Patroni's rule: loop_wait + 2 * retry_timeout <= ttl). The leader key lives
// `ttl` seconds after the primary's last refresh; a standby takes it over once it has expired.
// 10 s is as low as we go on a shared 2-core machine: a leader whose Patroni is starved of CPU
// for longer than ttl is demoted, and a lower ttl turns a busy minute into a spurious failover.
export const failoverTiming = { ttl: 10, loop_wait: 2, retry_timeout: 4 } as const;

export function etcdArguments(layout: ClusterLayout): string[] {
  const { etcd, scope } = layout;
  const client = `http://127.0.0.1:${etcd.clientPort}`;
  const peer = `http://127.0.0.1:${etcd.peerPort}`;
  return [
    "--name", "etcd1",
    "--data-dir", etcd.dataDir,
    "--listen-client-urls", client,
    "--advertise-client-urls", client,
    "--listen-peer-urls", peer,
    "--initial-advertise-peer-urls", peer,
    "--initial-cluster", `etcd1=${peer}`,
    "--initial-cluster-state", "new",
    "--initial-cluster-token", scope,
  ];
}

/** Settings every member must share: Patroni keeps them in etcd (its dynamic configuration). */
function sharedSettings(): Record<string, unknown> {
  return {
    ...failoverTiming,
    // A commit is acknowledged only once it is on the synchronous standby, and with _strict a
    // primary left without any standby stops acknowledging commits instead of going on alone.
    synchronous_mode: true,
    synchronous_mode_strict: true,
    synchronous_node_count: 1,
    postgresql: {
      use_pg_rewind: true,
      use_slots: true,
      parameters: {
        synchronous_commit: "on",
        max_connections: 200,
        wal_level: "replica",
        hot_standby: "on",
        // pg_rewind needs hint-bit changes logged (the data checksums of initdb do it too).
        wal_log_hints: "on",
        max_wal_senders: 10,
        max_replication_slots: 10,
        wal_keep_size: "256MB",
        shared_buffers: "64MB",
        // After a failover the remaining standby's first try to stream from the new primary
        // fails (its slot is made on the new primary's next Patroni loop), and with _strict no
        // commit is acknowledged until it streams again: retry after 1 s, not the default 5 s.
        wal_retrieve_retry_interval: "1s",
      },
    },
  };
}

function hbaLines(): string[] {
  return [
    // The node's own socket folder is the postgres user's alone.
    "local all all trust",
    `host replication ${replicationUserName} 127.0.0.1/32 scram-sha-256`,
    "host all all 127.0.0.1/32 scram-sha-256",
  ];
}

export function patroniConfig(layout: ClusterLayout, node: NodeLayout, password: string): string {
  const config = {
    scope: layout.scope,
    namespace: "/service/",
    name: node.name,
    restapi: {
      listen: `127.0.0.1:${node.restPort}`,
      connect_address: `127.0.0.1:${node.restPort}`,
    },
    etcd3: { hosts: [`127.0.0.1:${layout.etcd.clientPort}`] },
    bootstrap: {
      dcs: sharedSettings(),
      initdb: [{ encoding: "UTF8" }, { locale: "C.UTF-8" }, "data-checksums"],
    },
    postgresql: {
      listen: `127.0.0.1:${node.postgresPort}`,
      connect_address: `127.0.0.1:${node.postgresPort}`,
      data_dir: node.dataDir,
      bin_dir: postgresBinDir,
      pgpass: path.join(node.dir, "pgpass"),
      authentication: {
        superuser: { username: superuserName, password },
        replication: { username: replicationUserName, password },
      },
      pg_hba: hbaLines(),
      parameters: { unix_socket_directories: node.dir },
      basebackup: [{ checkpoint: "fast" }],
      // A killed primary that cannot be rewound is cloned again rather than left out.
      remove_data_directory_on_rewind_failure: true,
      remove_data_directory_on_diverged_timelines: true,
    },
    // No watchdog device here; kill -9 of Patroni is what the tests do instead.
    watchdog: { mode: "off" },
  };
  // YAML is a superset of JSON: no YAML writer needed.
  return `${JSON.stringify(config, null, 2)}\n`;
}

export function haproxyConfig(layout: ClusterLayout): string {
  const { haproxy, nodes } = layout;
  const servers = nodes.map(
    (node) => `  server ${node.name} 127.0.0.1:${node.postgresPort} check port ${node.restPort}`,
  );
  const routed = (name: string, port: number, check: string, extra: string[]): string[] => [
    `listen ${name}`,
    `  bind 127.0.0.1:${port}`,
    ...extra,
    // Patroni's REST API answers 200 on /primary only on the leader, on /replica only on a
    // running standby; a server that stops answering 200 has its sessions cut at once.
    `  option httpchk OPTIONS ${check}`,
    "  http-check expect status 200",
    "  default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions",
    ...servers,
    "",
  ];
  return [
    "global",
    "  maxconn 1000",
    "",
    "defaults",
    "  mode tcp",
    "  timeout connect 3s",
    // A test suite's pooled connections sit idle for minutes between tests.
    "  timeout client 60m",
    "  timeout server 60m",
    "  timeout check 2s",
    "",
    ...routed("primary", haproxy.primaryPort, "/primary", []),
    ...routed("replicas", haproxy.replicaPort, "/replica", ["  balance roundrobin"]),
    "listen stats",
    "  mode http",
    `  bind 127.0.0.1:${haproxy.statsPort}`,
    "  stats enable",
    "  stats uri /",
    "",
  ].join("\n");
}
