export type FileFormat = "ach" | "iso20022";

/**
 * Tells an ISO 20022 XML document from a NACHA file by its first bytes: XML starts with '<'
 * (after an optional byte-order mark and white space); a NACHA file starts with a file header
 * record, "1" then the priority code "01". A partial file may start with a batch header ("5").
 */
export function detectFormat(head: Uint8Array): FileFormat | undefined {
  let i = 0;
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) i = 3;
  while (i < head.length && (head[i] === 0x20 || head[i] === 0x09 || head[i] === 0x0a || head[i] === 0x0d)) i++;
  if (head[i] === 0x3c /* < */) return "iso20022";
  const start = String.fromCharCode(...head.subarray(i, i + 3));
  if (/^1\d\d$/.test(start) || /^5\d\d$/.test(start)) return "ach";
  return undefined;
}
