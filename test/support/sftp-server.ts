import { createHash, timingSafeEqual } from "node:crypto";
import { closeSync, fstatSync, mkdirSync, openSync, readSync, readdirSync, renameSync, rmSync, statSync, writeSync, type Stats } from "node:fs";
import type { AddressInfo } from "node:net";
import path from "node:path";
import ssh2 from "ssh2";

const { Server, utils } = ssh2;
const { STATUS_CODE, OPEN_MODE } = utils.sftp;

export interface KeyPair {
  private: string;
  public: string;
}

/**
 * An ECDSA P-256 key pair. Not ed25519: about one in 150 ed25519 keys from ssh2's own generator
 * cannot be parsed back by ssh2 ("Malformed OpenSSH private key"), which failed this suite once.
 */
export function newKeyPair(): KeyPair {
  return utils.generateKeyPairSync("ecdsa", { bits: 256 }) as KeyPair;
}

/** The SHA256 fingerprint of a public key, as `ssh-keygen -lf` prints it. */
export function fingerprintOf(publicKey: string): string {
  const parsed = utils.parseKey(publicKey);
  if (parsed instanceof Error) throw parsed;
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  return `SHA256:${createHash("sha256").update(key.getPublicSSH()).digest("base64").replace(/=+$/, "")}`;
}

export interface TestSftpServer {
  port: number;
  hostKey: KeyPair;
  close(): Promise<void>;
}

function attrsOf(stats: Stats) {
  return { mode: stats.mode, uid: stats.uid, gid: stats.gid, size: stats.size, atime: Math.floor(stats.atimeMs / 1000), mtime: Math.floor(stats.mtimeMs / 1000) };
}

/**
 * A real SFTP server (the ssh2 package's Server) serving `root` on a port (loopback unless
 * `listen` names a test host's address: peers/sftp-peer.ts), accepting one
 * user with one public key: no mocks, the client under test speaks the real protocol to it.
 */
export async function startSftpServer(
  root: string, user: { name: string; publicKey: string }, hostKey: KeyPair = newKeyPair(),
  listen: { host: string; port: number } = { host: "127.0.0.1", port: 0 },
): Promise<TestSftpServer> {
  const allowed = utils.parseKey(user.publicKey);
  if (allowed instanceof Error) throw allowed;
  const allowedKey = Array.isArray(allowed) ? allowed[0] : allowed;
  const resolve = (p: string) => {
    const full = path.resolve(root, `.${path.posix.resolve("/", p)}`);
    if (!full.startsWith(root)) throw new Error("outside the root");
    return full;
  };
  const server = new Server({ hostKeys: [hostKey.private] }, (client) => {
    client.on("authentication", (ctx) => {
      if (ctx.method !== "publickey" || ctx.username !== user.name) return ctx.reject(["publickey"]);
      const presented = ctx.key.data;
      const expected = allowedKey.getPublicSSH();
      if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return ctx.reject(["publickey"]);
      if (ctx.signature && ctx.blob && !allowedKey.verify(ctx.blob, ctx.signature, ctx.hashAlgo)) return ctx.reject(["publickey"]);
      ctx.accept();
    });
    client.on("error", () => undefined);
    client.on("ready", () => {
      client.on("session", (acceptSession) => {
        const session = acceptSession();
        session.on("sftp", (acceptSftp) => {
          const sftp = acceptSftp();
          const handles = new Map<number, { fd?: number; dir?: string[]; done?: boolean; path: string }>();
          let next = 0;
          const handle = (entry: { fd?: number; dir?: string[]; path: string }) => {
            const id = next++;
            handles.set(id, entry);
            const buffer = Buffer.alloc(4);
            buffer.writeUInt32BE(id);
            return buffer;
          };
          const lookup = (buffer: Buffer) => (buffer.length === 4 ? handles.get(buffer.readUInt32BE(0)) : undefined);
          const guard = (reqid: number, work: () => void) => {
            try {
              work();
            } catch (error) {
              sftp.status(reqid, (error as NodeJS.ErrnoException).code === "ENOENT" ? STATUS_CODE.NO_SUCH_FILE : STATUS_CODE.FAILURE);
            }
          };
          sftp.on("REALPATH", (reqid, p) => guard(reqid, () => {
            const resolved = path.posix.resolve("/", p);
            sftp.name(reqid, [{ filename: resolved, longname: resolved, attrs: {} as never }]);
          }));
          const stat = (reqid: number, p: string) => guard(reqid, () => sftp.attrs(reqid, attrsOf(statSync(resolve(p)))));
          sftp.on("STAT", stat);
          sftp.on("LSTAT", stat);
          sftp.on("OPEN", (reqid, filename, flags) => guard(reqid, () => {
            const write = (flags & OPEN_MODE.WRITE) !== 0;
            const fd = openSync(resolve(filename), write ? ((flags & OPEN_MODE.APPEND) ? "a" : "w") : "r");
            sftp.handle(reqid, handle({ fd, path: filename }));
          }));
          sftp.on("FSTAT", (reqid, h) => guard(reqid, () => {
            const entry = lookup(h);
            if (entry?.fd === undefined) return sftp.status(reqid, STATUS_CODE.FAILURE);
            sftp.attrs(reqid, attrsOf(fstatSync(entry.fd)));
          }));
          sftp.on("READ", (reqid, h, offset, length) => guard(reqid, () => {
            const entry = lookup(h);
            if (entry?.fd === undefined) return sftp.status(reqid, STATUS_CODE.FAILURE);
            const buffer = Buffer.alloc(length);
            const n = readSync(entry.fd, buffer, 0, length, offset);
            if (n === 0) return sftp.status(reqid, STATUS_CODE.EOF);
            sftp.data(reqid, buffer.subarray(0, n));
          }));
          sftp.on("WRITE", (reqid, h, offset, data) => guard(reqid, () => {
            const entry = lookup(h);
            if (entry?.fd === undefined) return sftp.status(reqid, STATUS_CODE.FAILURE);
            writeSync(entry.fd, data, 0, data.length, offset);
            sftp.status(reqid, STATUS_CODE.OK);
          }));
          sftp.on("CLOSE", (reqid, h) => guard(reqid, () => {
            const entry = lookup(h);
            if (!entry) return sftp.status(reqid, STATUS_CODE.FAILURE);
            if (entry.fd !== undefined) closeSync(entry.fd);
            handles.delete(h.readUInt32BE(0));
            sftp.status(reqid, STATUS_CODE.OK);
          }));
          sftp.on("OPENDIR", (reqid, p) => guard(reqid, () => {
            const dir = resolve(p);
            sftp.handle(reqid, handle({ dir: readdirSync(dir), path: dir }));
          }));
          sftp.on("READDIR", (reqid, h) => guard(reqid, () => {
            const entry = lookup(h);
            if (!entry?.dir) return sftp.status(reqid, STATUS_CODE.FAILURE);
            if (entry.done) return sftp.status(reqid, STATUS_CODE.EOF);
            entry.done = true;
            const names = entry.dir.map((name) => {
              const stats = statSync(path.join(entry.path, name));
              const kind = stats.isDirectory() ? "d" : "-";
              return { filename: name, longname: `${kind}rw-r--r-- 1 u g ${stats.size} Jan 1 00:00 ${name}`, attrs: attrsOf(stats) };
            });
            if (names.length === 0) return sftp.status(reqid, STATUS_CODE.EOF);
            sftp.name(reqid, names);
          }));
          sftp.on("RENAME", (reqid, from, to) => guard(reqid, () => {
            renameSync(resolve(from), resolve(to));
            sftp.status(reqid, STATUS_CODE.OK);
          }));
          sftp.on("REMOVE", (reqid, p) => guard(reqid, () => {
            rmSync(resolve(p));
            sftp.status(reqid, STATUS_CODE.OK);
          }));
          sftp.on("MKDIR", (reqid, p) => guard(reqid, () => {
            mkdirSync(resolve(p), { recursive: true });
            sftp.status(reqid, STATUS_CODE.OK);
          }));
        });
      });
    });
  });
  await new Promise<void>((done) => server.listen(listen.port, listen.host, () => done()));
  return {
    port: (server.address() as AddressInfo).port,
    hostKey,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
