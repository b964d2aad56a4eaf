import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// Decision 0078: after a failover the pool's new connections hold nothing of the old sessions. That
// is safe only while clearline keeps no state in a session: no LISTEN subscription but the API key
// listener's, and no session-level advisory lock but the migration's (held at start-up, on one
// connection). A change that adds one must say how it is taken again after a reconnect, and update
// this list.
const src = fileURLToPath(new URL("../../src/", import.meta.url));
const sessionLockAllowed = new Set(["db/migrate.ts"]);
// The API key listener (decision 0097): its own connection, outside the pool. Lost (a failover, a
// reset, a failed probe), its cache is cleared and bypassed until LISTEN succeeds again on a new
// connection, and cleared once more then; a standby refuses LISTEN, so it only listens on a primary.
const listenAllowed = new Set(["tenants/key-authenticator.ts"]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}

function findings(pattern: RegExp, allowed: Set<string>): string[] {
  return sourceFiles(src)
    .map((file) => path.relative(src, file))
    .filter((file) => !allowed.has(file) && pattern.test(readFileSync(path.join(src, file), "utf8")));
}

describe("state a PostgreSQL session holds across transactions", () => {
  it("no LISTEN subscription in src/ but the API key listener's", () => {
    expect(findings(/["'`]\s*LISTEN\s/i, listenAllowed)).toEqual([]);
  });

  it("finds the API key listener's LISTEN, so the scan sees what it looks for", () => {
    expect(findings(/["'`]\s*LISTEN\s/i, new Set())).toEqual(["tenants/key-authenticator.ts"]);
  });

  it("no session-level advisory lock but the migration's", () => {
    expect(findings(/pg_(try_)?advisory_lock(_shared)?\s*\(/, sessionLockAllowed)).toEqual([]);
  });

  it("finds the migration's session lock, so the scan sees what it looks for", () => {
    expect(findings(/pg_(try_)?advisory_lock(_shared)?\s*\(/, new Set())).toEqual(["db/migrate.ts"]);
  });
});
