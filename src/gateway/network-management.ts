import {
  buildResponse, type CardIssuer, type InboundContext, type InboundResult,
} from "../cards/index.ts";
import { de, expectsResponse, textField, type Message } from "../protocols/iso8583/index.ts";

/**
 * What the scheme endpoint answers itself: network management (0800: sign-on, sign-off, echo
 * test), which concerns the link and not an issuer, and nothing to a message that expects no
 * answer (a response, a notification). Every other message is the issuer side's to decide.
 */
const networkManagementCodes = new Set(["001", "002", "301"]); // DE 70: sign-on, sign-off, echo

export async function answerInbound(
  issuer: CardIssuer, message: Message, context: InboundContext,
): Promise<InboundResult> {
  if (!expectsResponse(message.mti)) {
    return { response: undefined, decision: "unanswered_message_class" };
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
