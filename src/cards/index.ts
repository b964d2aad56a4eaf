import type { Pool } from "../db/pool.ts";
import type { Logger } from "../observability/logger.ts";
import type { CardKeys } from "./card-key.ts";
import { CardAuthorizer } from "./card-authorizer.ts";
import { cardIssuer, type CardIssuer } from "./inbound.ts";
import { schemeLinkStore, type SchemeLinkStore } from "./outbound-store.ts";
import type { SchemeLink } from "./scheme-link.ts";

/**
 * The card-messages service, entered here: the card registry (a card is its keyed hash, BIN and
 * last four), the issuer side that decides what the scheme sends (originals, reversals, scheme
 * totals) and the acquirer side that sends authorizations (POST /v1/card-authorizations), with
 * their tables' SQL. The ISO 8583 adapter (src/gateway/) frames, keeps sessions and the outbound
 * link, and asks this room what to answer, as src/api/routes/ asks src/payments/.
 */
export {
  cardAuthorizationEndpoint,
  type AuthorizeOutcome, type CardAuthorizationRequest, type CardAuthorizationSender,
} from "./card-authorization.ts";
export { CardKeys, loadCardKeys } from "./card-key.ts";
export { CardAuthorizer } from "./card-authorizer.ts";
export { addCard, isPanWellFormed, type AddCardOutcome, type CardIdentity } from "./cards.ts";
export { cardIssuer, type CardIssuer, type InboundContext, type InboundResult } from "./inbound.ts";
export { buildResponse, type ResponseCodeName } from "./messages.ts";
export type { OutboundRow, SchemeLinkStore } from "./outbound-store.ts";
export type { Exchange, SchemeLink, UndecidedHandler } from "./scheme-link.ts";

/** The card channel's services over one database, as the composition root hands them over. */
export interface CardChannel {
  /** The issuer side for one scheme endpoint (its own group-commit writer). */
  issuer(): CardIssuer;
  /** What the outbound link keeps in the database. */
  linkStore: SchemeLinkStore;
  /** The acquirer side over `link`; without a link it answers iso8583_scheme_unavailable. */
  authorizer(link: SchemeLink | undefined, logger: Logger): CardAuthorizer;
}

export function openCardChannel(pool: Pool, keys: CardKeys): CardChannel {
  return {
    issuer: () => cardIssuer({ pool, keys }),
    linkStore: schemeLinkStore(pool),
    authorizer: (link, logger) => new CardAuthorizer(pool, keys, link, logger),
  };
}
