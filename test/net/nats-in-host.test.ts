import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNatsInHost, type HostNats } from "../support/net/peers/nats-peer.ts";
import { createTestHost, type TestHost } from "../support/net/test-host.ts";

describe("NATS in a test host", () => {
  let host: TestHost;
  let nats: HostNats;
  beforeAll(async () => {
    host = await createTestHost("nats");
    nats = await startNatsInHost(host);
  });
  afterAll(async () => {
    await nats?.stop();
    await host?.remove();
  });

  it("is reached from the root namespace on the host's address, with JetStream on", async () => {
    const connection = await connect({ servers: nats.url });
    try {
      const answer = await connection.request("$JS.API.INFO", "");
      const accountInfo = "io.nats.jetstream.api.v1.account_info_response";
      expect(answer.json<{ type: string }>().type).toBe(accountInfo);
      expect(connection.info?.client_ip).toBe(host.rootAddress);
    } finally {
      await connection.close();
    }
  });
});
