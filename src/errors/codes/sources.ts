// Codes of the file sources (src/sources): drop folders, SFTP pollers.
export const sourceErrorCodes = {
  SOURCE_SFTP_HOST_KEY_MISSING:
    "An SFTP partner needs the server's host key fingerprint (SHA256:...); connecting without it "
      + "is refused.",
  SOURCE_SFTP_HOST_KEY_MISMATCH:
    "The SFTP server's host key does not match the configured fingerprint: the connection was "
      + "refused.",
} as const satisfies Record<string, string>;
