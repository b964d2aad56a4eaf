/**
 * An ISO 20022 message identifier: business area, message number, variant and version, as the
 * Document namespace carries it. ISO namespaces read `urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08`;
 * national variants append to it, as the Swiss `http://www.six-interbank-clearing.com/de/pain.001.001.03.ch.02.xsd`.
 */
export interface MessageIdentifier {
  family: string;        // "pacs.008"
  variant: string;       // "001" (the message variant: 001 is the ISO base message)
  version: string;       // "08"
  id: string;            // "pacs.008.001.08"
  localVariant?: string; // ".ch.02" for a national usage guideline
}

const identifierPattern = /(?:^|[:/])([a-z]{4})\.(\d{3})\.(\d{3})\.(\d{2})((?:\.[a-z]{2}\.\d{2})?)(?:\.xsd)?$/;

export function parseMessageIdentifier(text: string): MessageIdentifier | undefined {
  const match = identifierPattern.exec(text.trim());
  if (!match) return undefined;
  const [, area = "", number = "", variant = "", version = "", local = ""] = match;
  const identifier: MessageIdentifier = { family: `${area}.${number}`, variant, version, id: `${area}.${number}.${variant}.${version}` };
  if (local !== "") identifier.localVariant = local;
  return identifier;
}
