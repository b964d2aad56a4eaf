import { existsSync } from "node:fs";
import path from "node:path";
import { finding, type Finding } from "../errors/finding.ts";
import { isIPv4, isIPv6 } from "node:net";

/**
 * Who may talk to the scheme endpoint (decisions 0022, 0064): peer networks, sign-on before
 * financial messages, and TLS with client certificates as an option.
 */
export interface Iso8583AdmissionConfig {
  allowedPeers: string[];           // CLEARLINE_ISO8583_ALLOWED_PEERS: CIDRs, comma-separated; default loopback only
  requireSignOn: boolean;           // CLEARLINE_ISO8583_REQUIRE_SIGN_ON: financial messages before a 0800 sign-on get 91; default true
  tls?: {
    certPath: string;               // CLEARLINE_ISO8583_TLS_CERT: the endpoint's certificate chain (PEM)
    keyPath: string;                // CLEARLINE_ISO8583_TLS_KEY
    clientCaPath: string;           // CLEARLINE_ISO8583_TLS_CLIENT_CA: a client certificate signed by it is required
  };
}

/** "a.b.c.d/n" or "x::y/n" -> its parts; undefined when it is not a CIDR. */
export function parseCidr(text: string): { address: string; prefix: number; family: "ipv4" | "ipv6" } | undefined {
  const match = /^([^/\s]+)\/(\d{1,3})$/.exec(text.trim());
  if (!match?.[1] || match[2] === undefined) return undefined;
  const [address, prefix] = [match[1], Number(match[2])];
  if (isIPv4(address) && prefix <= 32) return { address, prefix, family: "ipv4" };
  if (isIPv6(address) && prefix <= 128) return { address, prefix, family: "ipv6" };
  return undefined;
}

// Loopback only until the operator names the scheme's networks: an endpoint open to any address is a choice, not a default.
const defaultAllowedPeers = ["127.0.0.0/8", "::1/128"];

export function iso8583AdmissionSettings(pick: (name: string, envName: string) => unknown, home: string, errors: Finding[]): Iso8583AdmissionConfig {
  const rawPeers = pick("iso8583AllowedPeers", "CLEARLINE_ISO8583_ALLOWED_PEERS");
  const peers = rawPeers === undefined || rawPeers === "" ? defaultAllowedPeers
    : Array.isArray(rawPeers) ? rawPeers.map(String) : String(rawPeers).split(",").map((p) => p.trim()).filter((p) => p !== "");
  for (const peer of peers) {
    if (parseCidr(peer) === undefined) errors.push(finding("CONFIG_INVALID", `iso8583AllowedPeers: ${JSON.stringify(peer)} is not a CIDR such as 10.1.2.0/24 or ::1/128`, { field: "iso8583AllowedPeers" }));
  }
  const rawSignOn = pick("iso8583RequireSignOn", "CLEARLINE_ISO8583_REQUIRE_SIGN_ON");
  let requireSignOn = true;
  if (rawSignOn !== undefined && rawSignOn !== "") {
    if (rawSignOn === true || rawSignOn === "true") requireSignOn = true;
    else if (rawSignOn === false || rawSignOn === "false") requireSignOn = false;
    else errors.push(finding("CONFIG_INVALID", `iso8583RequireSignOn must be true or false, got ${JSON.stringify(rawSignOn)}`, { field: "iso8583RequireSignOn" }));
  }
  const settings: Iso8583AdmissionConfig = { allowedPeers: peers, requireSignOn };
  const tlsFiles = { certPath: pick("iso8583TlsCert", "CLEARLINE_ISO8583_TLS_CERT"), keyPath: pick("iso8583TlsKey", "CLEARLINE_ISO8583_TLS_KEY"), clientCaPath: pick("iso8583TlsClientCa", "CLEARLINE_ISO8583_TLS_CLIENT_CA") };
  const given = Object.entries(tlsFiles).filter(([, value]) => value !== undefined && value !== "");
  if (given.length === 0) return settings;
  if (given.length !== 3) {
    errors.push(finding("CONFIG_INVALID", "TLS on the scheme endpoint needs all three of iso8583TlsCert, iso8583TlsKey and iso8583TlsClientCa", { field: "iso8583Tls" }));
    return settings;
  }
  const resolved = Object.fromEntries(given.map(([name, value]) => [name, path.resolve(home, String(value))])) as NonNullable<Iso8583AdmissionConfig["tls"]>;
  for (const [name, file] of Object.entries(resolved)) {
    if (!existsSync(file)) errors.push(finding("CONFIG_INVALID", `iso8583 TLS ${name}: no file ${file}`, { field: `iso8583Tls.${name}` }));
  }
  settings.tls = resolved;
  return settings;
}
