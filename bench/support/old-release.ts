import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPOSITORY = fileURLToPath(new URL("../../", import.meta.url));

export interface OldRelease {
  commit: string;
  /** Its `clearline` command (src/cli/clearline.mjs over its own compiled dist/). */
  bin: string;
  remove(): void;
}

/**
 * The source of an earlier commit of this repository, unpacked into a temporary folder by `git
 * archive` (no worktree is registered) and compiled with this checkout's node_modules: the
 * process a fleet still runs while a newer release migrates the database.
 */
export function unpackOldRelease(commit: string): OldRelease {
  const dir = mkdtempSync(path.join(tmpdir(), `clearline-release-${commit}-`));
  const archive = execFileSync("git", ["-C", REPOSITORY, "archive", "--format=tar", commit],
    { maxBuffer: 512 * 1024 * 1024 });
  execFileSync("tar", ["-x", "-C", dir], { input: archive });
  symlinkSync(path.join(REPOSITORY, "node_modules"), path.join(dir, "node_modules"));
  const build = spawnSync("npm", ["run", "-s", "build"], { cwd: dir, encoding: "utf8" });
  if (build.status !== 0) throw new Error(`building ${commit} failed: ${build.stderr}`);
  return {
    commit,
    bin: path.join(dir, "src/cli/clearline.mjs"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
