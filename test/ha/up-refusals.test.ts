import { existsSync, readdirSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runHa } from "../support/ha/command.ts";
import { stateFilePath } from "../support/ha/index.ts";

// Ports of its own; no cluster comes up here.
const portBase = 15_700;
const haproxyPrimaryPort = portBase + 2;
let holder: Server;

beforeAll(async () => {
  holder = createServer();
  await new Promise<void>((resolve) => holder.listen(haproxyPrimaryPort, "127.0.0.1", resolve));
});

afterAll(async () => {
  await new Promise((resolve) => holder.close(resolve));
});

it("up refuses ports that are taken, names them and leaves nothing behind", async () => {
  const refused = runHa(["up", "--port-base", String(portBase)]);
  await expect(refused).rejects.toThrow(`ports in use on 127.0.0.1: ${haproxyPrimaryPort}`);
  expect(existsSync(stateFilePath(portBase))).toBe(false);
  const prefix = `clearline-ha-${portBase}-`;
  const folders = readdirSync(tmpdir()).filter((name) => name.startsWith(prefix));
  expect(folders).toEqual([]);
});
