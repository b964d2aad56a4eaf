import type { CardKeys } from "../cards/card-key.ts";
import { routeCard } from "../cards/cards.ts";
import type { Pool, Queryable } from "../db/pool.ts";
import { sqlState, withTransaction, type Tx } from "../db/transaction.ts";
import { recordDedupEvents } from "../dedup/dedup-event.ts";
import { currencyByNumeric } from "../protocols/iso4217/currency.ts";
import type { FieldValue, Message } from "../protocols/iso8583/index.ts";
import { isSourcePaused } from "../incidents/source-pause.ts";
import { decideOriginal, undoOriginal, type Amount, type OriginalForReversal, type UndoOutcome } from "./inbound-postings.ts";
import { processingRuleOf, type MessageKind } from "./processing-codes.ts";
import { replacementAmountOf } from "./replacement-amounts.ts";
import {
  authorizationIdOf, buildResponse, expectsResponse, fingerprintOf, identityOf, isRepeatMti, mtiClassOf, naturalKeyOf,
  originalIdentityOf, panOf, replayedResponse, storableFields, textField,
} from "./messages.ts";
import { handleReconciliation } from "./reconciliation-messages.ts";

/**
 * The issuer side: one inbound message -> one decision -> one response. Every decision that has
 * an effect commits with its stored response in one transaction, before the response is written
 * to the socket; a repeat or a retransmission is answered from the stored response and never
 * makes a second effect; each such repeat leaves a dedup_event row.
 */
export interface InboundDependencies {
  pool: Pool;
  keys: CardKeys;
}

export interface InboundContext {
  connection: string;   // which scheme connection, for dedup_event scope and rows
}

/** What happened, for the log line: identifiers and the decision only, never card data. */
export interface InboundResult {
  response: Message | undefined;
  decision: string;
  tenantId?: string;
  naturalKey?: string;
}

type OriginalKind = MessageKind;
const originalKinds: Readonly<Record<string, OriginalKind>> = {
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
// Originals: authorizations, financial requests, advices.

interface StoredRow {
  fingerprint: string;
  response_mti: string;
  response_fields: Record<string, FieldValue>;
  effect_key: string | null;
  natural_key: string;
}

function amountOf(message: Message, absentIsZero = false): Amount | undefined {
  const amount = textField(message, 4) ?? (absentIsZero ? "0" : undefined);
  const currency = currencyByNumeric(textField(message, 49) ?? "");
  if (amount === undefined || !/^\d{1,12}$/.test(amount) || currency === undefined) return undefined;
  return { amountMinor: BigInt(amount), currency: currency.code };
}

/** Serializes everything that concerns one original: its repeats, its reversal. */
async function lockOriginal(tx: Tx, tenantId: string, originalKey: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", [tenantId, originalKey]);
}

/** A unique-index race on the RRN between two different keys: the transaction is run again and sees the winner. */
async function inTransaction<T>(pool: Pool, work: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    return await withTransaction(pool, work);
  } catch (error) {
    if (sqlState(error) !== "23505") throw error;
    return withTransaction(pool, work);
  }
}

async function handleOriginal(deps: InboundDependencies, message: Message, context: InboundContext, kind: OriginalKind): Promise<InboundResult> {
  const identity = identityOf(message);
  // A balance inquiry may leave field 4 out: it asks, it moves nothing.
  const amount = amountOf(message, processingRuleOf(message, kind)?.action === "balance");
  const pan = panOf(message);
  if (identity === undefined || pan === undefined) return { response: buildResponse(message, "formatError"), decision: "required_field_missing" };
  if (amount === undefined) return { response: buildResponse(message, "invalidAmount"), decision: "amount_or_currency_invalid" };
  const route = await routeCard(deps.pool, deps.keys, pan);
  if (route.kind === "unknown_issuer") return { response: buildResponse(message, "unknownIssuer"), decision: "unknown_issuer" };
  // An operator stopped this tenant's card channel (incident): decide nothing, the scheme stands in.
  if (await isSourcePaused(deps.pool, route.tenantId, "iso8583")) return { response: buildResponse(message, "sourcePaused"), decision: "source_paused" };

  const tenantId = route.tenantId;
  const naturalKey = naturalKeyOf(identity);
  const rrn = textField(message, 37);
  // The transaction type is part of what a message says (a refund is not a purchase); purchases keep
  // the fingerprint they had before processing codes were served, so stored rows still match.
  const transactionType = (textField(message, 3) ?? "00").slice(0, 2);
  const fingerprint = fingerprintOf([identity.mtiClass, route.card.cardHash, amount.amountMinor.toString(), amount.currency, ...(transactionType === "00" ? [] : [`type:${transactionType}`])]);
  const position = positionOf(message);

  return inTransaction(deps.pool, async (tx) => {
    await lockOriginal(tx, tenantId, naturalKey);
    const seen = await selectOriginal(tx, tenantId, "natural_key = $2", [naturalKey]);
    const seenByRrn = seen ?? (rrn === undefined ? undefined
      : await selectOriginal(tx, tenantId, "mti_class = $2 AND retrieval_reference_number = $3", [identity.mtiClass, rrn]));
    if (seenByRrn !== undefined) {
      const link = seen !== undefined ? "key" : "rrn";
      if (seenByRrn.fingerprint !== fingerprint) {
        await recordDedupEvents(tx, [{ tenantId, channel: "iso8583", scope: context.connection, dedupKey: seenByRrn.natural_key, reason: `duplicate_transmission_${link}`, originalRef: seenByRrn.effect_key ?? seenByRrn.natural_key, position }]);
        return { response: buildResponse(message, "duplicateTransmission"), decision: "duplicate_transmission", tenantId, naturalKey };
      }
      const reason = `${isRepeatMti(message.mti) ? "repeat" : "retransmission"}${link === "rrn" ? "_by_rrn" : ""}`;
      await recordDedupEvents(tx, [{ tenantId, channel: "iso8583", scope: context.connection, dedupKey: seenByRrn.natural_key, reason, originalRef: seenByRrn.effect_key ?? seenByRrn.natural_key, position }]);
      return { response: replayedResponse(seenByRrn.response_mti, seenByRrn.response_fields, message), decision: reason, tenantId, naturalKey };
    }

    const reversal = await tx.query<{ natural_key: string }>("SELECT natural_key FROM iso8583_inbound_reversal WHERE tenant_id = $1 AND original_key = $2", [tenantId, naturalKey]);
    const decided = reversal.rows[0] !== undefined
      ? { outcome: "refused_after_reversal" as const, code: "refusedAfterReversal" as const, effectKey: null, accountId: null }
      : await decideOriginal(tx, kind, tenantId, naturalKey, route, amount, message);
    if (reversal.rows[0] !== undefined) {
      await recordDedupEvents(tx, [{ tenantId, channel: "iso8583", scope: context.connection, dedupKey: naturalKey, reason: "original_after_reversal", originalRef: reversal.rows[0].natural_key, position }]);
    }
    const authorizationId: Record<number, FieldValue> = decided.code === "approved" && kind === "authorization" ? { 38: authorizationIdOf(naturalKey) } : {};
    const extra = { ...authorizationId, ...("extra" in decided ? decided.extra : {}) };
    const response = buildResponse(message, decided.code, extra);
    await tx.query(
      `INSERT INTO iso8583_inbound (tenant_id, natural_key, mti_class, retrieval_reference_number, mti, fingerprint, card_hash, account_id,
         amount_minor, currency, outcome, response_code, response_mti, response_fields, effect_key, connection)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
      [tenantId, naturalKey, identity.mtiClass, rrn ?? null, message.mti, fingerprint, route.card.cardHash, decided.accountId,
        amount.amountMinor.toString(), amount.currency, decided.outcome, response.fields[39], response.mti, JSON.stringify(storableFields(response)),
        decided.effectKey, context.connection],
    );
    return { response, decision: decided.outcome, tenantId, naturalKey };
  });
}

async function selectOriginal(db: Queryable, tenantId: string, where: string, values: unknown[]): Promise<StoredRow | undefined> {
  const { rows } = await db.query<StoredRow>(
    `SELECT natural_key, fingerprint, response_mti, response_fields, effect_key FROM iso8583_inbound WHERE tenant_id = $1 AND ${where}`,
    [tenantId, ...values],
  );
  return rows[0];
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

async function handleReversal(deps: InboundDependencies, message: Message, context: InboundContext): Promise<InboundResult> {
  const identity = identityOf(message);
  const original = originalIdentityOf(message);
  if (identity === undefined || original === undefined) return { response: buildResponse(message, "formatError"), decision: "required_field_missing" };
  const originalKey = naturalKeyOf(original);
  const naturalKey = naturalKeyOf(identity);
  const pan = panOf(message);
  let tenantId: string;
  let cardHash = "";
  if (pan !== undefined) {
    const route = await routeCard(deps.pool, deps.keys, pan);
    if (route.kind === "unknown_issuer") return { response: buildResponse(message, "unknownIssuer"), decision: "unknown_issuer" };
    tenantId = route.tenantId;
    cardHash = route.card.cardHash;
  } else {
    // Without a PAN the original names the tenant; an orphan without a PAN cannot be placed.
    const owner = await deps.pool.query<{ tenant_id: string }>("SELECT tenant_id FROM iso8583_inbound WHERE natural_key = $1 LIMIT 2", [originalKey]);
    if (owner.rows.length !== 1 || owner.rows[0] === undefined) return { response: buildResponse(message, "originalNotFound"), decision: "reversal_unroutable" };
    tenantId = owner.rows[0].tenant_id;
  }
  const amountText = textField(message, 4) ?? "";
  if (!/^\d{1,12}$/.test(amountText)) return { response: buildResponse(message, "invalidAmount"), decision: "amount_invalid" };
  const amountMinor = BigInt(amountText);
  const replacement = replacementAmountOf(message);
  if (replacement.kind === "malformed") return { response: buildResponse(message, "formatError"), decision: "replacement_amounts_malformed" };
  // A partial reversal's actual amount is part of what it says: another actual amount is another reversal.
  const actualMinor = replacement.kind === "actual" ? replacement.actualMinor : undefined;
  const fingerprint = fingerprintOf(["reversal", cardHash, amountMinor.toString(), textField(message, 49) ?? "", ...(actualMinor === undefined ? [] : [`actual:${actualMinor}`])]);
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

/** Where a message came from, for dedup_event.position: identifiers only. */
function positionOf(message: Message): string {
  return `mti=${message.mti} stan=${textField(message, 11) ?? ""} rrn=${textField(message, 37) ?? ""}`;
}
