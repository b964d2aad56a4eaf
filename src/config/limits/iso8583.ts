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
} as const;
