import { mtiClassOf, type MessageKind } from "../normalize/from-iso8583.ts";
import type { Message } from "../protocols/iso8583/index.ts";
import { handleOriginal } from "./inbound-originals.ts";
import { handleReversal } from "./inbound-reversals.ts";
import { buildResponse, expectsResponse, isRequestOrAdvice, textField } from "./messages.ts";
import { handleReconciliation } from "./reconciliation-messages.ts";

/**
 * The issuer side: one inbound message -> one decision -> one response. Every decision that has
 * an effect commits with its stored response in one transaction, before the response is written
 * to the socket; a repeat or a retransmission is answered from the stored response and never
 * makes a second effect; each such repeat leaves a dedup_event row. Originals and reversals are decided by the
 * record core (inbound-originals.ts, inbound-reversals.ts); this module only dispatches by MTI.
 */
import type { InboundContext, InboundDependencies, InboundResult } from "./inbound-types.ts";

export type { InboundContext, InboundDependencies, InboundResult } from "./inbound-types.ts";

const originalKinds: Readonly<Record<string, MessageKind>> = {
  "010": "authorization", "012": "authorizationAdvice", "020": "financial", "022": "financialAdvice",
};
const networkManagementCodes = new Set(["001", "002", "301"]); // DE 70: sign-on, sign-off, echo test

export async function handleInbound(deps: InboundDependencies, message: Message, context: InboundContext): Promise<InboundResult> {
  if (!expectsResponse(message.mti)) return { response: undefined, decision: "unanswered_message_class" };
  // Instructions and the reserved functions (x6xx, x8xx, x9xx: 9999 for one) are answered 30.
  if (!isRequestOrAdvice(message.mti)) {
    return { response: buildResponse(message, "formatError"), decision: "mti_unsupported" };
  }
  const messageClass = mtiClassOf(message.mti);
  if (message.mti.startsWith("08")) {
    const code = textField(message, 70);
    if (code === undefined || !networkManagementCodes.has(code)) return { response: buildResponse(message, "formatError"), decision: "network_code_unknown" };
    return { response: buildResponse(message, "acknowledged"), decision: `network_${code}` };
  }
  const kind = originalKinds[messageClass];
  if (kind !== undefined) return handleOriginal(deps, message, context, kind);
  if (messageClass === "040" || messageClass === "042") return handleReversal(deps, message, context);
  if (messageClass === "050" || messageClass === "052") return handleReconciliation(deps, message, context);
  return { response: buildResponse(message, "formatError"), decision: "mti_unsupported" };
}
