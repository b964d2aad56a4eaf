import { parseArgs } from "node:util";
import {
  defaultPortBase,
  down,
  formatStatus,
  killPrimary,
  memberStatuses,
  readState,
  restartNode,
  up,
  type ClusterState,
  type NodeCount,
} from "./index.ts";

const usage = `usage: npm run ha -- <command> [options]

commands:
  up                 start etcd, the PostgreSQL 15 nodes under Patroni and HAProxy;
                     the last line printed is the primary's URL through HAProxy
  down               stop everything the cluster started and remove its folder (idempotent)
  status             each member with its role, state and lag
  kill-primary       kill -9 the leader's Patroni and PostgreSQL; prints the node
  restart-node NAME  start a killed node again; returns once it streams as a standby

options (or environment):
  --port-base N   CLEARLINE_HA_PORT_BASE  first of the cluster's loopback ports (${defaultPortBase})
  --nodes N       CLEARLINE_HA_NODES      2 or 3 PostgreSQL nodes (3)
  --base-dir DIR  CLEARLINE_HA_BASE_DIR   folder for all data and logs (a new temporary one)
  --json                                  status and kill-primary answer in JSON`;

interface Options {
  command: string;
  argument: string | undefined;
  portBase: number;
  nodeCount: NodeCount;
  baseDir: string | undefined;
  json: boolean;
}

function readOptions(argv: string[]): Options {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "port-base": { type: "string" },
      nodes: { type: "string" },
      "base-dir": { type: "string" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  if (positionals.length === 0) throw new UsageError("");
  const { env } = process;
  const portBase = Number(values["port-base"] ?? env.CLEARLINE_HA_PORT_BASE ?? defaultPortBase);
  if (!Number.isInteger(portBase) || portBase < 1024 || portBase > 65_000) {
    throw new UsageError(`--port-base must be a port from 1024 to 65000, not ${portBase}`);
  }
  const nodeCount = Number(values.nodes ?? env.CLEARLINE_HA_NODES ?? 3);
  if (nodeCount !== 2 && nodeCount !== 3) throw new UsageError(`--nodes must be 2 or 3`);
  return {
    command: positionals[0] ?? "",
    argument: positionals[1],
    portBase,
    nodeCount,
    baseDir: values["base-dir"] ?? env.CLEARLINE_HA_BASE_DIR,
    json: values.json ?? false,
  };
}

class UsageError extends Error {}

function requireState(portBase: number): ClusterState {
  const state = readState(portBase);
  if (!state) throw new Error(`no cluster on port base ${portBase} (npm run ha -- up starts one)`);
  return state;
}

// Progress goes to stderr; stdout carries the answer (up's URL on its last line).
const log = (line: string) => process.stderr.write(`ha: ${line}\n`);

async function run(options: Options): Promise<void> {
  const { portBase } = options;
  switch (options.command) {
    case "up": {
      const started = await up({ ...options, log });
      log(`up in ${(started.startupMs / 1000).toFixed(1)} s`);
      console.log(started.url);
      return;
    }
    case "down":
      await down({ portBase, log });
      return;
    case "status": {
      const state = requireState(portBase);
      const statuses = await memberStatuses(state);
      const lines = formatStatus(state, statuses);
      console.log(options.json ? JSON.stringify(statuses, null, 2) : lines.join("\n"));
      return;
    }
    case "kill-primary": {
      const killed = await killPrimary(requireState(portBase));
      const { node, patroniPid, postmasterPid, otherPids } = killed;
      const text =
        `killed ${node}: patroni pid ${patroniPid ?? "-"}, postgres pid ${postmasterPid ?? "-"}` +
        `, ${otherPids.length} other processes`;
      console.log(options.json ? JSON.stringify(killed) : text);
      return;
    }
    case "restart-node": {
      if (!options.argument) throw new UsageError("restart-node needs the node's name (node1)");
      const pid = await restartNode(requireState(portBase), options.argument);
      console.log(`${options.argument} streams again as a standby (patroni pid ${pid})`);
      return;
    }
    default:
      throw new UsageError(`unknown command ${options.command}`);
  }
}

try {
  await run(readOptions(process.argv.slice(2)));
} catch (error) {
  if (error instanceof UsageError) {
    if (error.message) console.error(error.message);
    console.error(usage);
    process.exit(2);
  }
  console.error(`ha: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
