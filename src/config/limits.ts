import { assert } from "../assert.ts";
import { achLimits } from "./limits/ach.ts";
import { availabilityLimits } from "./limits/availability.ts";
import { calendarLimits } from "./limits/calendars.ts";
import { dbLimits } from "./limits/db.ts";
import { fleetLimits } from "./limits/fleet.ts";
import { httpLimits } from "./limits/http.ts";
import { ingestLimits } from "./limits/ingest.ts";
import { iso20022Limits } from "./limits/iso20022.ts";
import { iso8583Limits } from "./limits/iso8583.ts";
import { ledgerLimits } from "./limits/ledger.ts";
import { outboxLimits } from "./limits/outbox.ts";
import { partnerLimits } from "./limits/partners.ts";
import { reconLimits } from "./limits/recon.ts";

/**
 * Every bound in one place. Pure codecs take these as defaults; the service may override some
 * through configuration (validated in src/config/config.ts).
 */
export const limits = {
  db: dbLimits,
  ledger: ledgerLimits,
  ach: achLimits,
  iso20022: iso20022Limits,
  iso8583: iso8583Limits,
  http: httpLimits,
  ingest: ingestLimits,
  recon: reconLimits,
  outbox: outboxLimits,
  partners: partnerLimits,
  fleet: fleetLimits,
  availability: availabilityLimits,
  calendars: calendarLimits,
} as const;

// A live relay is never overtaken: its delivery ends well inside its lease.
assert(outboxLimits.deliveryTimeoutMs * 2 <= outboxLimits.leaseMs, "an outbox delivery ends well inside its lease");
// The default lease lies inside the range a configuration may set.
assert(fleetLimits.leaseMsMin <= fleetLimits.leaseMs
  && fleetLimits.leaseMs <= fleetLimits.leaseMsMax,
  "the default lease is a settable one");
assert(calendarLimits.yearMin < calendarLimits.yearMax, "the calendars cover at least one year");
assert(outboxLimits.backoffBaseMs <= outboxLimits.backoffCapMs, "the outbox backoff starts below its cap");
const availability = availabilityLimits;
assert(availability.databaseRetryBackoffBaseMs <= availability.databaseRetryBackoffCapMs,
  "the database retry backoff starts below its cap");
assert(availability.embeddedRestartBackoffBaseMs <= availability.embeddedRestartBackoffCapMs,
  "the embedded restart backoff starts below its cap");
// By default /livez fails only after many probes could have seen the database back.
assert(availability.databaseRetryBackoffCapMs * 10 <= availability.livenessWithoutDatabaseMs,
  "a database back is seen well before liveness gives up");

// One peer must never be able to hold every slot of the scheme endpoint.
assert(iso8583Limits.inboundConnectionsPerPeerMax < iso8583Limits.inboundConnectionsMax, "the per-peer connection bound is below the total");
// Connections that never sign on can never hold every slot, and are closed long before an idle
// link would be.
assert(iso8583Limits.inboundUnsignedConnectionsMax < iso8583Limits.inboundConnectionsMax,
  "the budget of connections not signed on is below the total");
assert(iso8583Limits.inboundSignOnTimeoutMs * 10 <= iso8583Limits.inboundIdleTimeoutMs,
  "the sign-on deadline is far below the idle timeout");
// A stalled frame is closed long before an idle link would be.
assert(iso8583Limits.inboundFrameStartedTimeoutMs * 10 <= iso8583Limits.inboundIdleTimeoutMs, "the started-frame deadline is far below the idle timeout");
assert(httpLimits.listPageItemsDefault <= httpLimits.listPageItemsMax,
  "a list's default page is within its bound");
assert(httpLimits.paymentBatchRequestsMax <= httpLimits.paymentBatchQueueMax, "a full payment batch fits in the queue it is taken from");
assert(iso8583Limits.inboundBatchMessagesMax <= iso8583Limits.inboundBatchQueueMax, "a full batch of originals fits in the queue it is taken from");

/** Every bound is a positive whole number; a zero or negative bound is a configuration bug. */
export function assertLimitsValid(tree: object = limits, path = "limits"): void {
  for (const [name, value] of Object.entries(tree)) {
    const where = `${path}.${name}`;
    if (typeof value === "object" && value !== null) assertLimitsValid(value, where);
    else if (typeof value === "number") assert(Number.isSafeInteger(value) && value > 0, `${where} must be a positive integer`);
    else if (typeof value === "bigint") assert(value > 0n, `${where} must be positive`);
  }
}
// A probe of the key listener ends before the next one starts (decision 0097).
assert(httpLimits.apiKeyListenerProbeTimeoutMs < httpLimits.apiKeyListenerHeartbeatMs,
  "a key listener probe times out before the next probe");
assert(httpLimits.apiKeyOverlapMsDefault <= httpLimits.apiKeyOverlapMsMax,
  "the default overlap window is within its bound");
