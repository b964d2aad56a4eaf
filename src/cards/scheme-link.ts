import type { FieldValue, Message } from "../protocols/iso8583/index.ts";
import type { CardAuthorizationRequest } from "./card-authorization.ts";
import type { OutboundRow } from "./outbound-store.ts";

/**
 * The outbound scheme link as the acquirer side (card-authorizer.ts) uses it. The ISO 8583
 * adapter's OutboundConnection (src/gateway/outbound-connection.ts) is one; the composition root
 * hands it to the authorizer, so this room never imports the adapter. The link numbers and builds
 * the messages (STAN, RRN, transmission time, field 90), matches each response to its request and
 * resends pending reversals; the authorizer decides and stores.
 */
export type Exchange =
  | { kind: "response"; response: Message }
  | { kind: "timeout" }
  | { kind: "connection_lost" }
  | { kind: "not_sent" };

/** Decides an authorization nobody waits for any more (its caller died): persist its reversal. */
export type UndecidedHandler = (row: OutboundRow) => Promise<void>;

export interface SchemeLink {
  readonly options: { readonly name: string };   // the connection's name: rows' connection column
  readonly isSignedOn: boolean;
  readonly stans: { next(): Promise<string> };
  undecidedHandler: UndecidedHandler | undefined;
  /** A slot among the link's in-flight bound, or undefined when none freed in time. */
  acquireSlot(): Promise<(() => void) | undefined>;
  /** The 0100 for `request`, numbered `stan`. */
  authorizationRequest(request: CardAuthorizationRequest, stan: string): Message;
  /** The 0400 for an authorization whose outcome is unknown: field 90 names the original. */
  reversalFor(original: Record<string, FieldValue>, stan: string): Message;
  /** What a response echoes of its request: how reversals and late responses are found again. */
  matchKeyOf(message: Message): string;
  exchange(message: Message): Promise<Exchange>;
  /** Unregisters a finished exchange; returns responses that arrived after it was settled. */
  finish(message: Message): Message[];
  recordLate(message: Message): Promise<boolean>;
  /** Runs the reversal job now. */
  kickReversals(): void;
}
