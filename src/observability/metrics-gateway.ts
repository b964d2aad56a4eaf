import { Counter, Gauge, Histogram } from "prom-client";
import { latencyBucketsSeconds, registry } from "./metrics.ts";

/**
 * The message class of an MTI (its second digit), a bounded label whatever a peer sends:
 * authorization, financial, file_action, reversal, reconciliation, administrative, fee, network_management.
 */
export function messageClassOf(mti: string): string {
  const classes: Record<string, string> = {
    "1": "authorization", "2": "financial", "3": "file_action", "4": "reversal",
    "5": "reconciliation", "6": "administrative", "7": "fee", "8": "network_management",
  };
  return /^\d{4}$/.test(mti) ? (classes[mti.charAt(1)] ?? "other") : "other";
}

export const iso8583MessageDuration = new Histogram({
  name: "clearline_iso8583_message_duration_seconds",
  help: "ISO 8583 latency by direction and message class: inbound from the request read to its response written, outbound from the request sent to its response (or timeout)",
  labelNames: ["direction", "message_class", "outcome"] as const,
  buckets: latencyBucketsSeconds,
  registers: [registry],
});

/** ISO 8583 gateway metrics: what the on-call engineer asks of the card channel. */
export const iso8583InboundMessages = new Counter({
  name: "clearline_iso8583_inbound_messages_total",
  help: "Inbound scheme messages answered, by request MTI and response code (DE 39)",
  labelNames: ["mti", "response_code"] as const,
  registers: [registry],
});

export const iso8583InboundRejected = new Counter({
  name: "clearline_iso8583_inbound_rejected_total",
  help: "Inbound frames that could not be read (malformed message, bad frame), by error code",
  labelNames: ["code"] as const,
  registers: [registry],
});

export const iso8583InboundRefusedConnections = new Counter({
  name: "clearline_iso8583_inbound_refused_connections_total",
  help: "Inbound connections refused before any message: peer_not_allowed, peer_connections_max, tls_handshake",
  labelNames: ["reason"] as const,
  registers: [registry],
});

export const iso8583InboundClosedConnections = new Counter({
  name: "clearline_iso8583_inbound_closed_connections_total",
  help: "Inbound connections we closed: frame_deadline (a started frame stalled), mti_unreadable (an empty frame or one without an MTI), stream_broken, idle, sign_on_deadline (no sign-on in time), evicted_unsigned (not signed on, evicted for a newer connection), evicted_idle (idle the longest when every slot was signed on)",
  labelNames: ["reason"] as const,
  registers: [registry],
});

export const iso8583InboundConnections = new Gauge({
  name: "clearline_iso8583_inbound_connections",
  help: "Scheme connections open on the inbound endpoint",
  registers: [registry],
});

export const iso8583OutboundInflight = new Gauge({
  name: "clearline_iso8583_outbound_inflight",
  help: "Outbound requests sent and waiting for their response",
  registers: [registry],
});

export const iso8583OutboundOutcomes = new Counter({
  name: "clearline_iso8583_outbound_authorizations_total",
  help: "Outbound authorizations by outcome: approved, declined, reversed (timeout or lost connection)",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

export const iso8583LateResponses = new Counter({
  name: "clearline_iso8583_outbound_late_responses_total",
  help: "Responses that arrived after their request was reversed (recorded, never turned into an approval)",
  registers: [registry],
});

export const iso8583ReversalSends = new Counter({
  name: "clearline_iso8583_outbound_reversal_sends_total",
  help: "Reversals sent (0400 first, 0401 repeats) until the scheme acknowledges",
  labelNames: ["mti"] as const,
  registers: [registry],
});

export const iso8583ReversalsPending = new Gauge({
  name: "clearline_iso8583_outbound_reversals_pending",
  help: "Reversals persisted and not yet acknowledged by a 0410, at the reversal job's last run",
  registers: [registry],
});

export const iso8583OriginalBatches = new Counter({
  name: "clearline_iso8583_original_batches_total",
  help: "Group-commit transactions of ISO 8583 originals, by outcome (committed; fallback: every message run again alone; unknown: the COMMIT answer lost, every message asks alone)",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

export const iso8583OriginalBatchMessages = new Counter({
  name: "clearline_iso8583_original_batch_messages_total",
  help: "ISO 8583 originals by how they were decided: in a committed batch, alone after a failed batch, or alone because the queue was full",
  labelNames: ["path"] as const,
  registers: [registry],
});
