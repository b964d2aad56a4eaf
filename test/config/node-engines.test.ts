import { readFileSync } from "node:fs";
import semver from "semver";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url);
const project = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL("package-lock.json", root), "utf8")) as {
  packages: Record<string, { engines?: { node?: string } | string[]; dev?: boolean }>;
};

/**
 * The Node range in package.json is a promise: every installed package (the lock file records
 * each one's own `engines`) must accept the oldest Node it names and the newest major line, so
 * `npm install` on a supported Node never warns EBADENGINE (cookie 2, pulled in by fastify's
 * light-my-request, once asked for Node 22 while we said 20.19: pinned by an override).
 */
describe("the supported Node versions", () => {
  const oldest = semver.minVersion(project.engines.node)?.version ?? "";
  const packagesNeedingNode = Object.entries(lock.packages)
    .map(([name, entry]) => ({ name: name.replace(/^.*node_modules\//, ""), range: Array.isArray(entry.engines) ? undefined : entry.engines?.node }))
    .filter((p): p is { name: string; range: string } => typeof p.range === "string");

  it("start at a real version", () => {
    expect(oldest).toBe("20.19.0");
  });

  it("are accepted by every installed package, at the oldest we support", () => {
    const refusing = packagesNeedingNode.filter((p) => !semver.satisfies(oldest, p.range)).map((p) => `${p.name} (${p.range})`);
    expect(refusing).toEqual([]);
  });

  it("are accepted by every installed package on Node 22.13, the oldest of the next line we support", () => {
    const refusing = packagesNeedingNode.filter((p) => !semver.satisfies("22.13.0", p.range)).map((p) => `${p.name} (${p.range})`);
    expect(refusing).toEqual([]);
  });
});
