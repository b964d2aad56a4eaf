/**
 * Named fault points in the request path. They do nothing unless CLEARLINE_FAULT_POINT names
 * one, and then kill the process right there (SIGKILL: no cleanup, no flush), so tests can
 * prove that a crash at that moment never posts twice and never loses a payment.
 */
export type FaultPoint = "after_claim" | "after_posting" | "after_commit";

export function faultPoint(name: FaultPoint): void {
  if (process.env.CLEARLINE_FAULT_POINT === name) process.kill(process.pid, "SIGKILL");
}
