import { partition } from "../support/net/index.ts";
import type { Prng } from "../sim/prng.ts";
import type { ServiceProcess } from "../sim/service.ts";
import { soakBounds } from "./bounds.ts";
import type { PeerName, SoakTopology } from "./topology.ts";

/**
 * The soak's fault kinds. Each injects one fault and returns its heal; the schedule (soak.ts)
 * draws kinds and durations from the seed. Partitions are nftables rules in the peer's test host
 * (drop: silence; reset: TCP resets at once; one-way: one direction dropped); delays and stalls
 * come from the fault proxy on serve's path to PostgreSQL; a kill is SIGKILL of serve, restarted
 * after a drawn pause.
 */
export interface InjectedFault {
  detail: string;
  heal(): Promise<void>;
}

export interface FaultKind {
  name: string;
  inject(rng: Prng): Promise<InjectedFault>;
}

function partitionKind(topology: SoakTopology, peer: PeerName, name: string,
  shape: (rng: Prng) => { direction: "both" | "inbound" | "outbound"; response: "drop" | "reset" }): FaultKind {
  return {
    name,
    async inject(rng) {
      const options = shape(rng);
      const fault = await partition(topology.peers[peer].host, options);
      return { detail: fault.description, heal: () => fault.heal() };
    },
  };
}

const both = (response: "drop" | "reset") => () => ({ direction: "both" as const, response });
const eitherResponse = (rng: Prng) => ({ direction: "both" as const, response: rng.chance(0.5) ? "drop" as const : "reset" as const });
const oneWay = (rng: Prng) => ({ direction: rng.chance(0.5) ? "inbound" as const : "outbound" as const, response: "drop" as const });

export function faultKinds(topology: SoakTopology, service: ServiceProcess): FaultKind[] {
  const pgProxy = topology.peers.postgres.proxy;
  return [
    partitionKind(topology, "postgres", "postgres partition (drop)", both("drop")),
    partitionKind(topology, "postgres", "postgres partition (reset)", both("reset")),
    partitionKind(topology, "postgres", "postgres one-way partition", oneWay),
    {
      name: "postgres delay (proxy)",
      async inject(rng) {
        const delayMs = rng.int(soakBounds.proxyDelayMinMs, soakBounds.proxyDelayMaxMs);
        pgProxy.delay({ direction: "both", delayMs });
        return { detail: `every chunk to and from PostgreSQL ${delayMs} ms late`, heal: () => pgProxy.heal() };
      },
    },
    {
      name: "postgres stall (proxy)",
      async inject(rng) {
        const direction = rng.chance(0.5) ? "toTarget" as const : "toClient" as const;
        const afterBytes = rng.int(0, soakBounds.stallAfterBytesMax);
        pgProxy.stall({ direction, afterBytes });
        return { detail: `${direction} held after ${afterBytes} more bytes per connection`, heal: () => pgProxy.heal() };
      },
    },
    partitionKind(topology, "nats", "NATS partition", eitherResponse),
    partitionKind(topology, "scheme", "scheme link partition", eitherResponse),
    partitionKind(topology, "webhook", "webhook receiver partition", eitherResponse),
    partitionKind(topology, "sftp", "partner SFTP partition", eitherResponse),
    {
      name: "kill -9 serve",
      // Down for the fault's drawn duration, then restarted on the same database and home.
      async inject() {
        await service.kill9();
        return { detail: "SIGKILL", heal: () => service.start() };
      },
    },
  ];
}
