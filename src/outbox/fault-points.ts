/**
 * Named fault points of the outbox relay. They do nothing unless CLEARLINE_FAULT_POINT names one;
 * then the process is killed right there (SIGKILL: no cleanup, no flush). Tests prove that after
 * a kill at any of them every message is delivered and a receiver deduping on the derived key
 * sees each effect once.
 */
export const outboxFaultPoints = [
  "outbox_after_lease",  // rows leased (committed), nothing sent
  "outbox_after_send",   // the destination has the message, the row is not marked delivered
  "outbox_after_mark",   // marked delivered, the next pass not started
] as const;

export type OutboxFaultPoint = (typeof outboxFaultPoints)[number];

export function outboxFaultPoint(name: OutboxFaultPoint): void {
  if (process.env.CLEARLINE_FAULT_POINT === name) process.kill(process.pid, "SIGKILL");
}
