import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readIso20022Sync } from "../../src/protocols/iso20022/reader.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { startServeProcess } from "../support/serve-process.ts";
import { fixture, givenScene } from "../files/support.ts";

/**
 * Waits for a condition the service brings about (a file appearing). No deadline of its own, which
 * a busy machine could miss: the test's timeout is the last guard.
 */
async function until<T>(probe: () => T | undefined): Promise<T> {
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("clearline serve delivers partner files through its outbox relay", () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it("a pacs.008 dropped in the partner's drop folder ends with its pacs.002 in the partner's outbound folder", async () => {
    const scene = await givenScene(db.pool, "srv");
    const home = mkdtempSync(path.join(tmpdir(), "clearline-partner-serve-"));
    mkdirSync(path.join(home, "drop"));
    writeFileSync(path.join(home, "config.json"), JSON.stringify({
      dropFolders: [{ tenant: "srv", partner: scene.partner.name, path: "drop" }],
      partnerOutbound: [{ tenant: "srv", partner: scene.partner.name, folder: "outbound" }],
    }));
    const serve = await startServeProcess({ DATABASE_URL: db.url, CLEARLINE_HOME: home });
    try {
      writeFileSync(path.join(home, "drop", "pacs008.xml"), fixture("iso20022/pacs008-multi.xml"));
      const outbound = path.join(home, "outbound");
      const name = await until(() => (existsSync(outbound) ? readdirSync(outbound).find((n) => /^pacs002-[0-9a-f]{16}\.xml$/.test(n)) : undefined));
      const lines = readIso20022Sync(readFileSync(path.join(outbound, name))).flatMap((e) => (e.type === "transaction" ? [e.transaction.values.TxSts] : []));
      expect(lines).toEqual(["ACSC", "ACSC", "ACSC"]);
    } finally {
      await serve.stop();
    }
  }, 60_000);
});
