import { mtiClassOf, type MessageKind } from "../normalize/from-iso8583.ts";
import { expectsResponse, type Message } from "../protocols/iso8583/index.ts";
import { handleOriginal } from "./inbound-originals.ts";
import { handleReversal } from "./inbound-reversals.ts";
import { buildResponse } from "./messages.ts";
import { OriginalsGroupCommit } from "./originals-group-commit.ts";
import { handleReconciliation } from "./reconciliation-messages.ts";

/**
 * The issuer side: one inbound message -> one decision -> one response. Every decision that has
 * an effect commits with its stored response in one transaction, before the response is written
 * to the socket; a repeat or a retransmission is answered from the stored response and never
 * makes a second effect; each such repeat leaves a dedup_event row. Originals and reversals are decided by the
 * record core (inbound-originals.ts, inbound-reversals.ts); this module only dispatches by MTI.
 * Network management (08xx) is the link's own: the scheme endpoint (src/gateway/) answers it.
 */
import type { InboundContext, InboundDependencies, InboundResult } from "./inbound-types.ts";

export type { InboundContext, InboundDependencies, InboundResult } from "./inbound-types.ts";

const originalKinds: Readonly<Record<string, MessageKind>> = {
  "010": "authorization", "012": "authorizationAdvice", "020": "financial", "022": "financialAdvice",
};

export async function handleInbound(deps: InboundDependencies, message: Message, context: InboundContext): Promise<InboundResult> {
  if (!expectsResponse(message.mti)) return { response: undefined, decision: "unanswered_message_class" };
  const messageClass = mtiClassOf(message.mti);
  const kind = originalKinds[messageClass];
  if (kind !== undefined) return handleOriginal(deps, message, context, kind);
  if (messageClass === "040" || messageClass === "042") return handleReversal(deps, message, context);
  if (messageClass === "050" || messageClass === "052") return handleReconciliation(deps, message, context);
  return { response: buildResponse(message, "formatError"), decision: "mti_unsupported" };
}

/** What a scheme endpoint asks of the issuer side: the answer to a message it does not answer. */
export interface CardIssuer {
  answer(message: Message, context: InboundContext): Promise<InboundResult>;
}

/**
 * The issuer side for one scheme endpoint. Its originals are group-committed (decision 0045): one
 * writer for all the endpoint's connections, unless the caller brings its own.
 */
export function cardIssuer(deps: InboundDependencies): CardIssuer {
  const originalsWriter = deps.originalsWriter ?? new OriginalsGroupCommit(deps.pool);
  const withWriter = { ...deps, originalsWriter };
  return { answer: (message, context) => handleInbound(withWriter, message, context) };
}
