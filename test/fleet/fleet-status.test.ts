import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listLeases } from "../../src/fleet/index.ts";
import { runCliInProcess } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";
import { givenOperator, signIn } from "../support/ops-client.ts";
import { startServeProcess, type ServeProcess } from "../support/serve-process.ts";
import { givenTwin } from "../files/support.ts";

interface LeaseLine {
  lease: string; holder_address: string | null; held_here: boolean; live: boolean; token: string;
}

describe("which process of a fleet holds what", () => {
  let db: TestDatabase;
  const folders: string[] = [];
  const processes: ServeProcess[] = [];
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await db.drop();
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  });

  const serve = async (folder: string) => {
    const started = await startServeProcess({
      DATABASE_URL: db.url, CLEARLINE_DROP_FOLDER: folder, CLEARLINE_FLEET_LEASE_MS: "3000",
    });
    processes.push(started);
    return started;
  };
  const newFolder = () => {
    const folder = mkdtempSync(path.join(tmpdir(), "clearline-fleet-status-"));
    folders.push(folder);
    return folder;
  };

  it("is shown by clearline status (each lease, its holder's address, this one's) and the console",
    async () => {
    const scene = await givenTwin(db.pool, "default", "default");
    const [shared, ownOfSecond] = [newFolder(), newFolder()];
    const first = await serve(shared);
    await eventually(async () => (await listLeases(db.pool)).filter((l) => l.live).length === 5);
    const second = await serve(ownOfSecond);
    // The second process's own folder is a lease of its own; nothing else is free.
    await eventually(async () => (await listLeases(db.pool)).filter((l) => l.live).length === 6);

    const status = await runCliInProcess(["status", "--json", "--url", second.baseUrl]);
    expect(status.exitCode).toBe(0);
    const leases = (JSON.parse(status.stdout) as { leases: LeaseLine[] }).leases;
    const byName = new Map(leases.map((l) => [l.lease, l]));
    expect(byName.get(`drop-folder:default/default:${shared}`))
      .toMatchObject({ holder_address: first.baseUrl, held_here: false, live: true, token: "1" });
    expect(byName.get(`drop-folder:default/default:${ownOfSecond}`))
      .toMatchObject({ holder_address: second.baseUrl, held_here: true });
    expect(byName.get("job:balance-projection"))
      .toMatchObject({ holder_address: first.baseUrl, held_here: false });
    const text = await runCliInProcess(["status", "--url", second.baseUrl]);
    expect(text.stdout).toContain(`job:balance-projection: held by`);
    expect(text.stdout).toContain(`(${first.baseUrl})`);
    expect(text.stdout).toContain("(this process)");

    const secret = await givenOperator(db.pool, scene.tenantId, "ada", "viewer");
    const operator = await signIn(second.baseUrl, "default", "ada", secret);
    const page = await operator.get("/console/fleet");
    expect(page.status).toBe(200);
    const sharedRow = page.text.split("<tr").find((row) => row.includes(`:${shared}"`)) ?? "";
    expect(sharedRow).toMatch(/data-state="held"/);
    expect(page.text).toContain(first.baseUrl);
  });
});
