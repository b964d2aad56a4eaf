import { createHash } from "node:crypto";
import type { Pool } from "../db/pool.ts";
import { withTransaction, type Tx } from "../db/transaction.ts";
import { recordDedupEventsCheaply } from "../dedup/dedup-event.ts";
import {
  claim, complete, findRecord, type IdempotencyRecord, type IdempotencyScope,
  type StoredHttpResponse,
} from "../idempotency/records.ts";
import { differingFields, requestDigest, type Canonical } from "../idempotency/request-digest.ts";
import type { Logger } from "../observability/logger.ts";
import { iso8583OutboundOutcomes } from "../observability/metrics-gateway.ts";
import { minorToDecimal } from "../protocols/iso4217/currency.ts";
import { de, type FieldValue, type Message } from "../protocols/iso8583/index.ts";
import { cardAuthorizationEndpoint, type AuthorizeOutcome, type CardAuthorizationRequest, type CardAuthorizationSender } from "./card-authorization.ts";
import type { CardKeys } from "./card-key.ts";
import { cardIdentity } from "./cards.ts";
import { findOutbound, insertOutbound, persistReversal, recordResponse, type OutboundRow } from "./outbound-store.ts";
import type { Exchange, SchemeLink } from "./scheme-link.ts";

class FencedOff extends Error {}

/**
 * POST /v1/card-authorizations, the acquirer side, as a two-phase flow: (1) claim the
 * Idempotency-Key and persist the 0100 in one transaction, commit; (2) send it and wait; (3) in a
 * second transaction record the response, or on a timeout or a lost connection persist the
 * reversal, and complete the key, fenced by the claim's attempt. The caller always gets a
 * definite answer: approved, declined, or reversed (the outcome was unknown, so it was undone).
 * A takeover of a key whose earlier attempt died never sends a second 0100: it answers from
 * that attempt's row, reversing it if it was never decided. The link (numbering, message
 * building, matching, sending) is the ISO 8583 adapter's, handed in by the composition root.
 */
export class CardAuthorizer implements CardAuthorizationSender {
  constructor(private readonly pool: Pool, private readonly keys: CardKeys, private readonly outbound: SchemeLink | undefined, private readonly logger: Logger) {
    if (outbound !== undefined) outbound.undecidedHandler = (row) => this.reverseUndecided(row);
  }

  async authorize(request: CardAuthorizationRequest): Promise<AuthorizeOutcome> {
    const scope: IdempotencyScope = { tenantId: request.tenantId, endpoint: cardAuthorizationEndpoint, key: request.idempotencyKey };
    const card = cardIdentity(this.keys, request.tenantId, request.pan);
    // The stored request names the card by its keyed hash: the PAN never reaches the table.
    const canonical: Canonical = {
      card_hash: card.cardHash, amount_minor: request.amountMinor.toString(), currency: request.currency, terminal: request.terminal, merchant: request.merchant,
    };
    const digest = requestDigest(canonical);

    const seen = await findRecord(this.pool, scope);
    if (seen && (seen.state === "completed" || !seen.leaseExpired)) return this.answerHeld(scope, digest, canonical, seen);
    const outbound = this.outbound;
    if (outbound === undefined || !outbound.isSignedOn) return { kind: "scheme_unavailable" };
    const release = await outbound.acquireSlot();
    if (release === undefined) return { kind: "scheme_busy" };
    try {
      // Numbers come before the transaction: no pool checkout while a transaction holds one.
      const stan = await outbound.stans.next();
      const earlier = seen === undefined ? undefined : await findOutbound(this.pool, request.tenantId, request.idempotencyKey);
      const reversalStan = earlier?.state === "sent" ? await outbound.stans.next() : undefined;
      const message = outbound.authorizationRequest(request, stan);

      let phase1:
        | { kind: "send"; attempt: number } | { kind: "done"; response: StoredHttpResponse }
        | { kind: "held"; record: IdempotencyRecord } | { kind: "busy" };
      try {
        phase1 = await withTransaction(this.pool, async (tx) => {
          const claimed = await claim(tx, scope, digest, canonical);
          if (claimed.kind !== "claimed") return claimed;
          const existing = await findOutbound(tx, request.tenantId, request.idempotencyKey, { forUpdate: true });
          if (existing !== undefined) {
            const response = await this.decideEarlier(tx, existing, reversalStan ?? (await outbound.stans.next()));
            if (!(await complete(tx, scope, claimed.attempt, response))) throw new FencedOff();
            return { kind: "done" as const, response };
          }
          await insertOutbound(tx, {
            tenantId: request.tenantId, idemKey: request.idempotencyKey, attempt: claimed.attempt, connection: outbound.options.name,
            matchKey: outbound.matchKeyOf(message), request: message, cardHash: card.cardHash, cardBin: card.bin, cardLastFour: card.lastFour,
            amountMinor: request.amountMinor, currency: request.currency,
          });
          return { kind: "send" as const, attempt: claimed.attempt };
        });
      } catch (error) {
        if (error instanceof FencedOff) return { kind: "in_progress" };
        throw error;
      }
      if (phase1.kind === "held") return this.answerHeld(scope, digest, canonical, phase1.record);
      if (phase1.kind === "busy") return this.inProgress(scope);
      if (phase1.kind === "done") {
        outbound.kickReversals();
        return { kind: "answer", response: phase1.response, replayed: false };
      }

      return await this.sendAndDecide(request, scope, outbound, message, phase1.attempt);
    } finally {
      release();
    }
  }

  /**
   * Phase 2: the 0100 is on record; now it goes out. The response (or, on a timeout or a lost
   * connection, the reversal) is recorded and the key completed in one transaction, fenced by the
   * claim's attempt.
   */
  private async sendAndDecide(request: CardAuthorizationRequest, scope: IdempotencyScope, outbound: SchemeLink, message: Message, attempt: number): Promise<AuthorizeOutcome> {
    const exchange = await outbound.exchange(message);
    const needsReversal = exchange.kind !== "response";
    const secondStan = needsReversal ? await outbound.stans.next() : undefined;
    let response: StoredHttpResponse;
    try {
      response = await withTransaction(this.pool, async (tx) => {
        await this.decide(tx, request, message, exchange, secondStan);
        const row = await findOutbound(tx, request.tenantId, request.idempotencyKey);
        if (row === undefined) throw new Error("the outbound row written in phase 1 is gone");
        const stored = storedResponseOf(row);
        if (!(await complete(tx, scope, attempt, stored))) throw new FencedOff();
        return stored;
      });
    } catch (error) {
      // Another attempt took the key over; this row stays 'sent' and the reversal job undoes it.
      if (error instanceof FencedOff) return { kind: "in_progress" };
      throw error;
    } finally {
      for (const late of outbound.finish(message)) await outbound.recordLate(late);
    }
    if (needsReversal) outbound.kickReversals();
    this.logger.info({ tenantId: request.tenantId, stan: message.fields[de.systemTraceAuditNumber], outcome: JSON.parse(response.body).status, exchange: exchange.kind }, "card authorization decided");
    return { kind: "answer", response, replayed: false };
  }

  private async decide(tx: Tx, request: CardAuthorizationRequest, message: Message, exchange: Exchange, reversalStan: string | undefined): Promise<void> {
    if (exchange.kind === "response") {
      const decided = await recordResponse(tx, request.tenantId, request.idempotencyKey, exchange.response);
      const approved = exchange.response.fields[de.responseCode] === "00";
      iso8583OutboundOutcomes.inc({ outcome: decided ? (approved ? "approved" : "declined") : "too_late" });
      return;
    }
    if (reversalStan === undefined || this.outbound === undefined) throw new Error("a reversal needs its STAN and the connection");
    const reversal = this.outbound.reversalFor(storedRequestFields(message), reversalStan);
    await persistReversal(tx, request.tenantId, request.idempotencyKey, reversal, this.outbound.matchKeyOf(reversal));
    iso8583OutboundOutcomes.inc({ outcome: "reversed" });
  }

  /** A takeover found the earlier attempt's row: its answer, after reversing it if it was never decided. */
  private async decideEarlier(
    tx: Tx, row: OutboundRow, reversalStan: string,
  ): Promise<StoredHttpResponse> {
    if (row.state !== "sent" || this.outbound === undefined) return storedResponseOf(row);
    const reversal = this.outbound.reversalFor(row.requestFields, reversalStan);
    await persistReversal(tx, row.tenantId, row.idemKey, reversal, this.outbound.matchKeyOf(reversal));
    const decided = await findOutbound(tx, row.tenantId, row.idemKey);
    return storedResponseOf(decided ?? row);
  }

  /** The reversal job found a sent authorization nobody is deciding (its process stopped): reverse it. */
  async reverseUndecided(row: OutboundRow): Promise<void> {
    const outbound = this.outbound;
    if (outbound === undefined) return;
    const reversal = outbound.reversalFor(row.requestFields, await outbound.stans.next());
    await withTransaction(this.pool, async (tx) => {
      if (!(await persistReversal(tx, row.tenantId, row.idemKey, reversal, outbound.matchKeyOf(reversal)))) return;
      const decided = await findOutbound(tx, row.tenantId, row.idemKey);
      // False when a newer attempt holds the key: it will answer from this row.
      if (decided !== undefined) await complete(tx, { tenantId: row.tenantId, endpoint: cardAuthorizationEndpoint, key: row.idemKey }, row.attempt, storedResponseOf(decided));
    });
    iso8583OutboundOutcomes.inc({ outcome: "reversed" });
    this.logger.warn({ tenantId: row.tenantId, stan: row.stan }, "authorization left undecided by a stopped process; reversal persisted");
  }

  private async answerHeld(scope: IdempotencyScope, digest: string, canonical: Canonical, record: IdempotencyRecord): Promise<AuthorizeOutcome> {
    if (record.digest !== digest) {
      await this.audit(scope, "key_reuse", null);
      return { kind: "key_reuse", differing: differingFields(record.canonical, canonical) };
    }
    if (record.state === "in_progress") return this.inProgress(scope);
    await this.audit(scope, "replayed", record.response.effectRef);
    return { kind: "answer", response: record.response, replayed: true };
  }

  private async inProgress(scope: IdempotencyScope): Promise<AuthorizeOutcome> {
    await this.audit(scope, "in_progress", null);
    return { kind: "in_progress" };
  }

  private audit(scope: IdempotencyScope, reason: string, originalRef: string | null): Promise<void> {
    return recordDedupEventsCheaply(this.pool, [{ tenantId: scope.tenantId, channel: "http", scope: scope.endpoint, dedupKey: scope.key, reason, ...(originalRef ? { originalRef } : {}) }]);
  }
}

function storedRequestFields(message: Message): Record<string, FieldValue> {
  const fields: Record<string, FieldValue> = {};
  for (const [key, value] of Object.entries(message.fields)) if (Number(key) !== de.primaryAccountNumber) fields[key] = value;
  return fields;
}

/** The authorization as the API shows it: identifiers, masked card, outcome. */
export function authorizationView(row: OutboundRow): Record<string, unknown> {
  const status = row.state === "sent" ? "pending" : row.state;
  return {
    id: cardAuthorizationIdOf(row.tenantId, row.idemKey),
    status,
    response_code: row.state === "reversed" ? null : row.responseCode,
    authorization_code: row.state === "approved" ? (row.responseFields?.[de.authorizationIdentificationResponse] ?? null) : null,
    reversal: row.reversalState === null ? null : { state: row.reversalState },
    card: { bin: row.cardBin, last_four: row.cardLastFour },
    amount: minorToDecimal(row.amountMinor, row.currency),
    currency: row.currency,
    terminal: String(row.requestFields[de.cardAcceptorTerminalIdentification] ?? "").trimEnd(),
    merchant: String(row.requestFields[de.cardAcceptorIdentificationCode] ?? "").trimEnd(),
    stan: row.stan,
    rrn: row.rrn,
  };
}

function storedResponseOf(row: OutboundRow): StoredHttpResponse {
  const effectRef = cardAuthorizationIdOf(row.tenantId, row.idemKey);
  return { status: 201, body: JSON.stringify(authorizationView(row)), effectRef };
}

export function cardAuthorizationIdOf(tenantId: string, idemKey: string): string {
  return `cauth_${createHash("sha256").update(`${tenantId}\u001f${idemKey}`).digest("hex").slice(0, 24)}`;
}
