import type { ErrorCode } from "../errors/catalog.ts";

/**
 * What the relay hands a leased outbox row to. Each destination kind (webhook endpoint, NATS,
 * a partner's folder or SFTP server) has one deliverer; the relay asks each in turn whether it
 * can deliver a destination and gives the row to the first that says yes.
 *
 * Delivery is at least once: a deliverer may be called again for a row it already delivered (the
 * relay died before marking it), so it sends the row's `messageKey` unchanged for the receiver to
 * dedup on (Webhook-Id, Nats-Msg-Id, a file name).
 */
export interface OutboxMessage {
  tenantId: string;
  id: string;             // the row's id (bigint as text)
  destination: string;    // 'webhook:<endpoint id>', 'nats', 'partner:<partner id>'
  messageType: string;    // 'payment.applied', 'pacs.002', ...
  messageKey: string;     // derived from the intent; unchanged on every retry
  payload: unknown;
  attempts: number;       // this attempt's number, from 1
  createdAt: Date;
}

export interface OutboxDeliverer {
  canDeliver(destination: string): boolean;
  /**
   * Resolves when the destination has the message. Throwing is a failed attempt, retried with
   * backoff up to the attempt bound; throwing an OutboxPermanentError dead-letters the row at once,
   * an OutboxDestinationDisabled holds it.
   * `signal` aborts when the relay stops or the lease is about to end.
   */
  deliver(message: OutboxMessage, signal: AbortSignal): Promise<void>;
}

/**
 * A destination that takes nothing for now (a webhook endpoint disabled after it answered 410
 * Gone): the row is held, neither retried nor dead-lettered, until the destination is enabled.
 */
export class OutboxDestinationDisabled extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = "OutboxDestinationDisabled";
    this.code = code;
  }
}

/** A failure no retry can fix (the endpoint is gone, the payload is refused as malformed). */
export class OutboxPermanentError extends Error {
  readonly code: ErrorCode;  // in the catalog (src/errors/codes/outbox.ts, partners.ts)
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = "OutboxPermanentError";
    this.code = code;
  }
}
