// Bounds of the iso8583 channel: every queue, buffer, size and timeout, each with its unit and why.
export const iso8583Limits = {
  // ISO 8583 frame body without its length header. Scheme messages are a few hundred bytes; 8 KiB
  // leaves room for full EMV data and private fields while bounding what one peer can make us buffer.
  frameBytesMax: 8_192,
  // One message (the frame body). Equal to the frame bound: a message is exactly one frame.
  messageBytesMax: 8_192,
  // Primary, secondary and tertiary: the standard defines no fourth bitmap (fields stop at 192).
  bitmapsMax: 3,
  // Largest variable length a dictionary may declare: LLLL is the widest prefix the codec reads.
  variableFieldLengthMax: 9_999,
  // BER-TLV elements in one composite field (DE 55 EMV data carries about 20-40 tags in practice).
  tlvElementsMax: 64,
  // Characters of a (masked) value quoted in an error: enough to recognise it, never a whole field.
  errorValueCharsMax: 48,
  // Bytes the `clearline iso8583` tool reads from its argument or stdin (hex text or JSON): a
  // trace excerpt, not a capture file.
  cliInputBytesMax: 1_048_576,

  // --- The gateway (src/gateway): connections, in-flight messages, timeouts, retries. ---
  // Scheme connections the inbound endpoint accepts at once: a scheme opens a handful (one per
  // link, a few for load); 32 leaves room for reconnects overlapping old sockets.
  inboundConnectionsMax: 32,
  // Messages of one inbound connection being decided at once; reading pauses at this bound, so a
  // peer that floods us is slowed by TCP, not buffered in memory. Each holds a database
  // connection at most, so more than a few times the pool only waits.
  inboundInflightPerConnectionMax: 64,
  // Connections one peer address may hold: a scheme needs a few links; 8 of 32 means a peer that
  // floods the endpoint (idle or half-sent connections) leaves three quarters for everyone else.
  inboundConnectionsPerPeerMax: 8,
  // Connections that have not signed on yet, all peers together (docs/decisions/0064): a scheme
  // signs each link on within a round trip of connecting, so 8 covers a reconnect of all its
  // links at once. Past it (or past the total) a new connection evicts the oldest of them, so
  // sockets that never sign on, from any number of addresses, cannot keep a scheme link out.
  inboundUnsignedConnectionsMax: 8,
  // A connection must sign on (0800, DE 70 = 001) within 10 s of connecting, or of signing off: a
  // scheme sends its sign-on at once; 10 s covers a TLS handshake and a slow first round trip.
  inboundSignOnTimeoutMs: 10_000,
  // A scheme link with no message for 5 minutes is dead: schemes echo every 30 to 60 s.
  inboundIdleTimeoutMs: 300_000,
  // A frame whose first byte arrived must be complete within 5 s: a scheme writes a message of a
  // few hundred bytes at once; a peer that stalls mid-frame is closed long before the idle timeout.
  inboundFrameStartedTimeoutMs: 5_000,
  // A TLS handshake (client certificate included) finishes in well under a second on a live link.
  inboundTlsHandshakeTimeoutMs: 10_000,
  // Group commit of originals (decision 0045). Originals of one tenant and connection decided in
  // one transaction: 64 is one connection's in-flight bound, so a full window can go in one batch
  // (one ledger statement of 128 legs, well under a file chunk).
  inboundBatchMessagesMax: 64,
  // Batch transactions open at once per endpoint: a lone message starts one at once (no timer);
  // two, so one fills while the other waits for its commit (2 cores here); more only contend on
  // shared accounts' row locks.
  inboundBatchesInFlightMax: 2,
  // Originals waiting for the next batch; past it a message is decided alone, exactly as before
  // group commit (the pool bounds how many run at once). 512 = the total of 8 connections' windows.
  inboundBatchQueueMax: 512,
  // Outbound requests in flight on the scheme connection; a request beyond waits for a slot.
  outboundInflightMax: 64,
  // How long a request waits for an in-flight slot before it is refused (nothing was stored).
  outboundSlotWaitMs: 5_000,
  // A scheme answers an authorization within seconds; after 10 s the outcome is unknown and the
  // authorization is reversed.
  outboundResponseTimeoutMs: 10_000,
  // A quiet scheme connection is echoed (0800/301) after this long without traffic.
  outboundEchoIdleMs: 30_000,
  // Reconnect backoff: first wait, doubling to the maximum.
  outboundReconnectBackoffMs: 250,
  outboundReconnectBackoffMaxMs: 30_000,
  // Reversal repeats (0401): first wait after a send, doubling to the maximum; repeated until a
  // 0410 arrives, however long that takes (the money is held at the scheme until then).
  reversalRetryBackoffMs: 1_000,
  reversalRetryBackoffMaxMs: 60_000,
  // How often the reversal job looks for due repeats, and how many it sends per run.
  reversalJobIntervalMs: 1_000,
  reversalBatchRowsMax: 100,
  // STANs taken from the database per block: one counter write per 100 messages.
  stanBlockSize: 100,
  // Issuer BINs whose tenant one process remembers (a BIN's tenant never changes once written):
  // an issuer has tens to hundreds of BINs; past the bound a BIN is read from the database each time.
  binRoutesCachedMax: 10_000,
} as const;
