import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { startSftpServer } from "../../sftp-server.ts";

/**
 * A partner's SFTP server for a test host (run in its namespace by peers/sftp-in-host.ts): the
 * suite's real ssh2 server serving --root on the host's address, accepting one user by public key.
 * It says on stdout, in one JSON line, that it listens.
 */
const { values } = parseArgs({ options: {
  host: { type: "string" },
  port: { type: "string" },
  root: { type: "string" },
  user: { type: "string" },
  "public-key-file": { type: "string" },
  "host-key-file": { type: "string" },
  "host-public-key-file": { type: "string" },
} });
const required = (name: keyof typeof values): string => {
  const value = values[name];
  if (!value) throw new Error(`--${name} is required`);
  return value;
};
const server = await startSftpServer(
  required("root"),
  { name: required("user"), publicKey: readFileSync(required("public-key-file"), "utf8") },
  {
    private: readFileSync(required("host-key-file"), "utf8"),
    public: readFileSync(required("host-public-key-file"), "utf8"),
  },
  { host: required("host"), port: Number(required("port")) },
);
process.stdout.write(`${JSON.stringify({ event: "listening", port: server.port })}\n`);
