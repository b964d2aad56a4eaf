/**
 * Waits until `condition` holds: a short poll, for state that has no event to wait on (a lease
 * row, a file moved by another process). No deadline of its own: vitest's test timeout bounds it.
 */
export async function eventually(
  condition: () => boolean | Promise<boolean>, pollMs = 25,
): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, pollMs));
}
