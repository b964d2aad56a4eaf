import reasonsJson from "../../../protocols/nacha/return-reasons.json" with { type: "json" };
import { assert } from "../../assert.ts";
import { isReturnReasonCode } from "./codes.ts";

const reasons = new Map<string, string>();
for (const [code, entry] of Object.entries(reasonsJson.byCode)) {
  const why = `return reason for ${code}: ${entry.reasonCode} is a return reason code`;
  assert(isReturnReasonCode(entry.reasonCode), why);
  reasons.set(code, entry.reasonCode);
}

/** The NACHA return reason for an entry refused with this code; undefined: not returned. */
export function returnReasonFor(code: string): string | undefined {
  return reasons.get(code);
}
