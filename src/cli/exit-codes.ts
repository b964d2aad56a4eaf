/** 0 ok; 1 a failure (database down, a bug, a verification that found problems); 2 bad usage or rejected input. */
export const exitCodes = { ok: 0, failure: 1, usage: 2 } as const;

/** Thrown by a command to stop with a one-line message and an exit code. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode: number = exitCodes.failure) {
    super(message);
    this.name = "CliError";
  }
}
