import reasonsJson from "../../../protocols/nacha/return-reasons.json" with { type: "json" };
import { assert } from "../../assert.ts";
import { isReturnReasonCode } from "./codes.ts";

const reasons = new Map<string, string>();
for (const [ingestCode, entry] of Object.entries(reasonsJson.byIngestCode)) {
  assert(isReturnReasonCode(entry.reasonCode), `return reason for ${ingestCode}: ${entry.reasonCode} is a return reason code`);
  reasons.set(ingestCode, entry.reasonCode);
}

/** The NACHA return reason for an entry refused with this ingestion code; undefined: not returned. */
export function returnReasonFor(ingestCode: string): string | undefined {
  return reasons.get(ingestCode);
}
