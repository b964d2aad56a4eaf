import {
  buildResponse, type CardIssuer, type InboundContext, type InboundResult,
} from "../cards/index.ts";
import {
  de, expectsResponse, isRequestOrAdvice, textField, type Message,
} from "../protocols/iso8583/index.ts";

/**
 * What the scheme endpoint answers itself: network management (0800: sign-on, sign-off, echo
 * test), which concerns the link and not an issuer; a format error (30) to an MTI no issuer
 * takes; and nothing to a message that expects no answer (a response, a notification). Every other message is the issuer side's to decide.
 */
const networkManagementCodes = new Set(["001", "002", "301"]); // DE 70: sign-on, sign-off, echo

export async function answerInbound(
  issuer: CardIssuer, message: Message, context: InboundContext,
): Promise<InboundResult> {
  if (!expectsResponse(message.mti)) {
    return { response: undefined, decision: "unanswered_message_class" };
  }
  // Instructions and the functions ISO reserves (x6xx, x8xx, x9xx: 9999 for one) are answered 30
  // here, at once, signed on or not (docs/decisions/0064): no issuer decides them.
  if (!isRequestOrAdvice(message.mti)) {
    return { response: buildResponse(message, "formatError"), decision: "mti_unsupported" };
  }
  if (message.mti.startsWith("08")) return answerNetworkManagement(message);
  return issuer.answer(message, context);
}

function answerNetworkManagement(message: Message): InboundResult {
  const code = textField(message, de.networkManagementInformationCode);
  if (code === undefined || !networkManagementCodes.has(code)) {
    return { response: buildResponse(message, "formatError"), decision: "network_code_unknown" };
  }
  return { response: buildResponse(message, "acknowledged"), decision: `network_${code}` };
}
