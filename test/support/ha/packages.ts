import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { postgresBinDir } from "./layout.ts";

/**
 * The Debian packages the HA test cluster runs on. A fresh CI machine may lack them: they are
 * installed with apt, once, non-interactively, and the tool says what it installs. Patroni
 * brings python3-etcd, which its etcd3 client needs (it speaks etcd's v3 JSON gateway through
 * urllib3, not python3-etcd3); PostgreSQL 15 is only installed when its binaries are missing.
 */
const required = ["patroni", "etcd-server", "haproxy"] as const;
const postgresPackage = "postgresql-15";

function isInstalled(name: string): boolean {
  const query = spawnSync("dpkg-query", ["-W", "-f=${db:Status-Status}", name], {
    encoding: "utf8",
  });
  return query.status === 0 && query.stdout.trim() === "installed";
}

export function missingPackages(): string[] {
  const missing: string[] = required.filter((name) => !isInstalled(name));
  if (!existsSync(`${postgresBinDir}/postgres`)) missing.push(postgresPackage);
  return missing;
}

/** Installs what is missing; returns what it installed. Throws when it cannot (not root). */
export function ensurePackages(log: (line: string) => void): string[] {
  const missing = missingPackages();
  if (missing.length === 0) return [];
  if (process.getuid?.() !== 0) {
    throw new Error(
      `missing packages ${missing.join(", ")}; the HA cluster installs them with apt as root ` +
        `(run as root, or: apt-get install -y ${missing.join(" ")})`,
    );
  }
  log(`installing with apt: ${missing.join(" ")}`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  // apt's output goes to stderr: stdout is kept for what the tool answers (up's URL).
  const options = { env, stdio: ["ignore", 2, 2] as ["ignore", number, number] };
  // A fresh machine may have no package lists yet; the update makes the install find them.
  execFileSync("apt-get", ["update", "-q"], options);
  execFileSync("apt-get", ["install", "-y", "-q", ...missing], options);
  const still = missingPackages();
  if (still.length > 0) throw new Error(`apt-get did not install: ${still.join(", ")}`);
  return missing;
}
