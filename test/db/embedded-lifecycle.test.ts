import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { unreachableAncestor } from "../../src/db/embedded-access.ts";
import { EmbeddedDatabaseError, startEmbeddedPostgres } from "../../src/db/embedded.ts";
import { isProcessAlive, livePostmaster, ownerOf } from "../../src/db/embedded-postmaster.ts";
import { startServeProcess, type ServeProcess } from "../support/serve-process.ts";

/** Waits for a process to be gone: the event itself, checked as often as the machine allows. */
async function processGone(pid: number): Promise<void> {
  while (isProcessAlive(pid)) await sleep(50);
}

describe("the embedded PostgreSQL's lifecycle", () => {
  const homes: string[] = [];
  const newHome = () => {
    const home = mkdtempSync(path.join(tmpdir(), "clearline-lifecycle-"));
    homes.push(home);
    return home;
  };
  const started: ServeProcess[] = [];
  afterAll(async () => {
    for (const serve of started) await serve.stop();
    for (const home of homes) {
      const left = livePostmaster(path.join(home, "pgdata"));
      if (left) process.kill(left.pid, "SIGINT");
      if (left) await processGone(left.pid);
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("adopts the server a kill -9 of `clearline serve` left running, and stops it when the next process stops", async () => {
    const home = newHome();
    const env = { DATABASE_URL: "", CLEARLINE_HOME: home };
    const first = await startServeProcess(env);
    started.push(first);
    const orphan = livePostmaster(path.join(home, "pgdata"));
    expect(orphan).toBeDefined();
    expect(ownerOf(home)).toBe(first.child.pid);

    first.child.kill("SIGKILL");
    expect(await first.exited).toBeNull();
    expect(isProcessAlive(orphan!.pid)).toBe(true);   // the orphan of the issue

    const second = await startServeProcess(env);
    started.push(second);
    expect(livePostmaster(path.join(home, "pgdata"))?.pid).toBe(orphan!.pid);   // adopted, not started twice
    expect(ownerOf(home)).toBe(second.child.pid);
    expect((await fetch(`${second.baseUrl}/healthz`)).status).toBe(200);

    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    await processGone(orphan!.pid);
    expect(livePostmaster(path.join(home, "pgdata"))).toBeUndefined();
    expect(ownerOf(home)).toBeUndefined();
  });

  it("shares a server whose owner is alive and leaves it running, then stops what it started itself", async () => {
    const home = newHome();
    const owner = await startEmbeddedPostgres(home);
    expect(owner.owned).toBe(true);
    const sharer = await startEmbeddedPostgres(home);
    // The owner file names a live process (this one): the second start shares, and its stop leaves the server.
    expect(sharer).toMatchObject({ url: owner.url, owned: false });
    await sharer.stop();
    expect(livePostmaster(path.join(home, "pgdata"))).toBeDefined();
    await owner.stop();
    const pidFile = path.join(home, "pgdata", "postmaster.pid");
    expect(() => readFileSync(pidFile)).toThrow();

    // A server that exits while starting is described by its own log lines (it used to reject with undefined).
    appendFileSync(path.join(home, "pgdata", "postgresql.conf"), "\nshared_buffers = 'not a size'\n");
    const failed = await startEmbeddedPostgres(home).then(() => undefined, (error: unknown) => error);
    expect(failed).toBeInstanceOf(EmbeddedDatabaseError);
    expect((failed as EmbeddedDatabaseError).code).toBe("DB_EMBEDDED_START_FAILED");
    expect((failed as Error).message).toMatch(/shared_buffers/);
  });

  it("names the directory the database user cannot enter, and the fix, before initdb runs", async () => {
    const outer = newHome();
    chmodSync(outer, 0o700);
    const home = path.join(outer, "inner-home");
    mkdirSync(home);
    if (userInfo().uid === 0) {
      const refused = await startEmbeddedPostgres(home).then(() => undefined, (error: unknown) => error);
      expect(refused).toBeInstanceOf(EmbeddedDatabaseError);
      expect((refused as EmbeddedDatabaseError).code).toBe("DB_EMBEDDED_DIRECTORY_UNREACHABLE");
      expect((refused as Error).message).toContain(`cannot enter ${outer} (mode 0700`);
      expect((refused as Error).message).toContain(`chmod o+x ${outer}`);
    } else {
      // Not root: the server runs as this user, who owns the directory and may enter it.
      const db = await startEmbeddedPostgres(home);
      await db.stop();
    }
  });

  it("finds the first directory on the way that a user cannot traverse, one mode bit at a time", () => {
    const outer = newHome();
    const inner = path.join(outer, "a", "b");
    mkdirSync(inner, { recursive: true });
    chmodSync(outer, 0o700);
    const stranger = { name: "stranger", uid: userInfo().uid + 4242, gid: userInfo().gid + 4242 };
    expect(unreachableAncestor(inner, stranger)).toMatchObject({ directory: outer, mode: 0o700 });
    chmodSync(outer, 0o701);
    expect(unreachableAncestor(inner, stranger)).toBeUndefined();
  });
});
