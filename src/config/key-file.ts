import { randomBytes } from "node:crypto";
import { closeSync, constants, existsSync, linkSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";

/**
 * A secret of the service kept in a file of CLEARLINE_HOME (the card hash key, the webhook secret
 * key): created on first use with 32 random bytes as hex, mode 0600, and refused when anyone but
 * its owner may read it. Back it up with the database: what it keys cannot be read without it.
 */
export function readOrCreateKeyFile(home: string, fileName: string): Buffer {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const file = path.join(home, fileName);
  if (!existsSync(file)) {
    // Written whole under a private name, then linked into place: of two processes starting at
    // once, one links and the other gets EEXIST and reads the winner's complete file.
    const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
    const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      writeSync(fd, randomBytes(32).toString("hex") + "\n");
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(temporary, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      unlinkSync(temporary);
    }
  }
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) throw new Error(`${file} must be readable by its owner only (mode 0600), it is ${mode.toString(8)}`);
  const text = readFileSync(file, "utf8").trim();
  if (!/^(?:[0-9a-f]{2}){32,}$/.test(text)) throw new Error(`${file} does not hold a hex secret of at least 32 bytes`);
  return Buffer.from(text, "hex");
}
