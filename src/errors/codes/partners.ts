export const partnerErrorCodes = {
  PARTNER_DELIVERY_FILE_MISSING: "An outbox message for a partner names no file stored for that partner: it cannot be delivered (dead letter).",
  PARTNER_DELIVERY_HOST_KEY_MISMATCH: "The partner's SFTP server presented a host key other than the configured fingerprint: nothing was sent.",
  PARTNER_NOT_FOUND: "No partner of the tenant has this id or name.",
} as const;
