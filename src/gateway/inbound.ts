import { routeCard } from "../cards/cards.ts";
import { recordDedupEvents } from "../dedup/dedup-event.ts";
import { identityOf, messageFingerprintOf, mtiClassOf, naturalKeyOf, originalIdentityOf, type MessageKind } from "../normalize/from-iso8583.ts";
import type { FieldValue, Message } from "../protocols/iso8583/index.ts";
import { handleOriginal } from "./inbound-originals.ts";
import { undoOriginal, type OriginalForReversal, type UndoOutcome } from "./inbound-postings.ts";
import { inTransaction, lockOriginal, positionOf } from "./inbound-store.ts";
import { replacementAmountOf } from "./replacement-amounts.ts";
import { buildResponse, expectsResponse, isRepeatMti, panOf, replayedResponse, storableFields, textField } from "./messages.ts";
import { handleReconciliation } from "./reconciliation-messages.ts";

/**
 * The issuer side: one inbound message -> one decision -> one response. Every decision that has
 * an effect commits with its stored response in one transaction, before the response is written
 * to the socket; a repeat or a retransmission is answered from the stored response and never
 * makes a second effect; each such repeat leaves a dedup_event row. Originals are decided by the
 * record core (inbound-originals.ts); reversals here, against the stored originals.
 */
import type { InboundContext, InboundDependencies, InboundResult } from "./inbound-types.ts";

export type { InboundContext, InboundDependencies, InboundResult } from "./inbound-types.ts";

const originalKinds: Readonly<Record<string, MessageKind>> = {
  "010": "authorization", "012": "authorizationAdvice", "020": "financial", "022": "financialAdvice",
};
const networkManagementCodes = new Set(["001", "002", "301"]); // DE 70: sign-on, sign-off, echo test

export async function handleInbound(deps: InboundDependencies, message: Message, context: InboundContext): Promise<InboundResult> {
  if (!expectsResponse(message.mti)) return { response: undefined, decision: "unanswered_message_class" };
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

// ---------------------------------------------------------------------------------------------
// Reversals: matched to the original through field 90, at most one per original.

interface ReversalRow {
  natural_key: string;
  fingerprint: string;
  response_mti: string;
  response_fields: Record<string, FieldValue>;
  effect_key: string | null;
}

/** The reversal's tenant: by its card, or without a PAN by its original (an orphan without a PAN cannot be placed). */
async function placeReversal(deps: InboundDependencies, message: Message, originalKey: string): Promise<{ tenantId: string; cardHash: string } | { refused: InboundResult }> {
  const pan = panOf(message);
  if (pan !== undefined) {
    const route = await routeCard(deps.pool, deps.keys, pan);
    if (route.kind === "unknown_issuer") return { refused: { response: buildResponse(message, "unknownIssuer"), decision: "unknown_issuer" } };
    return { tenantId: route.tenantId, cardHash: route.card.cardHash };
  }
  const owner = await deps.pool.query<{ tenant_id: string }>("SELECT tenant_id FROM iso8583_inbound WHERE natural_key = $1 LIMIT 2", [originalKey]);
  if (owner.rows.length !== 1 || owner.rows[0] === undefined) return { refused: { response: buildResponse(message, "originalNotFound"), decision: "reversal_unroutable" } };
  return { tenantId: owner.rows[0].tenant_id, cardHash: "" };
}

async function handleReversal(deps: InboundDependencies, message: Message, context: InboundContext): Promise<InboundResult> {
  const identity = identityOf(message);
  const original = originalIdentityOf(message);
  if (identity === undefined || original === undefined) return { response: buildResponse(message, "formatError"), decision: "required_field_missing" };
  const originalKey = naturalKeyOf(original);
  const naturalKey = naturalKeyOf(identity);
  const placed = await placeReversal(deps, message, originalKey);
  if ("refused" in placed) return placed.refused;
  const { tenantId, cardHash } = placed;
  const amountText = textField(message, 4) ?? "";
  if (!/^\d{1,12}$/.test(amountText)) return { response: buildResponse(message, "invalidAmount"), decision: "amount_invalid" };
  const amountMinor = BigInt(amountText);
  const replacement = replacementAmountOf(message);
  if (replacement.kind === "malformed") return { response: buildResponse(message, "formatError"), decision: "replacement_amounts_malformed" };
  // A partial reversal's actual amount is part of what it says: another actual amount is another reversal.
  const actualMinor = replacement.kind === "actual" ? replacement.actualMinor : undefined;
  const fingerprint = messageFingerprintOf(["reversal", cardHash, amountMinor.toString(), textField(message, 49) ?? "", ...(actualMinor === undefined ? [] : [`actual:${actualMinor}`])]);
  const position = positionOf(message);

  return inTransaction(deps.pool, async (tx) => {
    await lockOriginal(tx, tenantId, originalKey);
    const seen = await tx.query<ReversalRow>(
      "SELECT natural_key, fingerprint, response_mti, response_fields, effect_key FROM iso8583_inbound_reversal WHERE tenant_id = $1 AND original_key = $2",
      [tenantId, originalKey],
    );
    const earlier = seen.rows[0];
    if (earlier !== undefined) {
      const sameReversal = earlier.fingerprint === fingerprint;
      const reason = !sameReversal ? "duplicate_transmission" : isRepeatMti(message.mti) ? "repeat" : "retransmission";
      await recordDedupEvents(tx, [{ tenantId, channel: "iso8583", scope: context.connection, dedupKey: `reversal-of:${originalKey}`, reason, originalRef: earlier.effect_key ?? earlier.natural_key, position }]);
      const response = sameReversal ? replayedResponse(earlier.response_mti, earlier.response_fields, message) : buildResponse(message, "duplicateTransmission");
      return { response, decision: `reversal_${reason}`, tenantId, naturalKey };
    }

    const found = await tx.query<OriginalForReversal>(
      "SELECT outcome, effect_key, account_id, amount_minor, currency, mti_class FROM iso8583_inbound WHERE tenant_id = $1 AND natural_key = $2",
      [tenantId, originalKey],
    );
    const originalRow = found.rows[0];
    // Field 95 can only lower the transaction's amount: an actual amount above the original's is refused, recording nothing.
    if (originalRow !== undefined && actualMinor !== undefined && actualMinor > BigInt(originalRow.amount_minor)) {
      return { response: buildResponse(message, "invalidAmount"), decision: "reversal_actual_above_original", tenantId, naturalKey };
    }
    const undoMinor = originalRow === undefined ? 0n : BigInt(originalRow.amount_minor) - (actualMinor ?? 0n);
    let outcome: UndoOutcome | "nothing_to_reverse" | "orphan";
    let effectKey: string | null = null;
    if (originalRow === undefined) {
      outcome = "orphan";
      await recordDedupEvents(tx, [{ tenantId, channel: "iso8583", scope: context.connection, dedupKey: `reversal-of:${originalKey}`, reason: "orphan", position }]);
    } else if (originalRow.effect_key === null || undoMinor === 0n) {
      outcome = "nothing_to_reverse";
    } else {
      const undo = await undoOriginal(tx, tenantId, originalKey, { ...originalRow, effect_key: originalRow.effect_key }, undoMinor, message);
      outcome = undo.outcome;
      effectKey = undo.effectKey;
    }
    const response = buildResponse(message, "acknowledged");
    await tx.query(
      `INSERT INTO iso8583_inbound_reversal (tenant_id, original_key, natural_key, mti, fingerprint, amount_minor, outcome, response_code, response_mti, response_fields, effect_key, connection,
         actual_minor, undone_minor)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [tenantId, originalKey, naturalKey, message.mti, fingerprint, amountMinor.toString(), outcome, response.fields[39], response.mti,
        JSON.stringify(storableFields(response)), effectKey, context.connection, actualMinor?.toString() ?? null, effectKey === null ? "0" : undoMinor.toString()],
    );
    return { response, decision: `reversal_${outcome}`, tenantId, naturalKey };
  });
}
