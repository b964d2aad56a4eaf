/**
 * A broken invariant is a bug, not bad input: the process must stop rather than carry on with
 * state it no longer understands. Always on, never compiled out.
 */
export class InvariantError extends Error {
  readonly code = "INVARIANT_BROKEN";
  constructor(message: string) {
    super(`invariant broken: ${message}`);
    this.name = "InvariantError";
  }
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new InvariantError(message);
}

export function assertNever(value: never, message = "unexpected variant"): never {
  throw new InvariantError(`${message}: ${String(value)}`);
}
