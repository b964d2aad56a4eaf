export const partnerErrorCodes = {
  PARTNER_UNKNOWN:
    "No clearing partner of this tenant has this name or id.",
  PARTNER_EXISTS:
    "A clearing partner with this name exists for this tenant.",
  PARTNER_NAME_INVALID:
    "A partner name is 1 to 63 letters, digits, '.', '_' or '-'.",
  PARTNER_ALIAS_INVALID:
    "An account alias is a scheme and a value: aba:<routing>:<account>, iban:<IBAN> or acct:<id>.",
  PARTNER_DELIVERY_FILE_MISSING: "An outbox message for a partner names no file stored for that partner: it cannot be delivered (dead letter).",
  PARTNER_DELIVERY_HOST_KEY_MISMATCH: "The partner's SFTP server presented a host key other than the configured fingerprint: nothing was sent.",
  PARTNER_REPORT_NOT_SENT: "A report or file for a partner (a rejection report, a pacs.002, a return file) was kept but not queued: no partnerOutbound entry (an outbound folder, or sftp: true) names the partner, so it could never be delivered. A warning on the file it is about; configure the partner's outbound channel to send later ones.",
  RETURN_DEADLINE_PASSED:
    "A return clearline would send its partner is past NACHA's deadline for its reason code (two"
    + " banking days after the original's settlement for most codes; docs/decisions/0094): it is"
    + " refused, left out of the return file and kept with the deadline it missed; what the"
    + " unreturned entry means for money is for a person to settle with the partner.",
  PARTNER_NOT_FOUND: "No partner of the tenant has this id or name.",
} as const;
