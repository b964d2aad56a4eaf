import { createHash } from "node:crypto";
import type { ErrorCode } from "../errors/catalog.ts";

export interface Payment {
  paymentId: string;
  clientReference: string;
  status: "succeeded" | "declined";
  declineCode: string | null;
  amountMinor: bigint;
  currency: string;
  debtorAccount: string;
  creditorAccount: string;
  description: string | null;
  refundedMinor: bigint;
  createdAt: string;
}

export interface Refund {
  refundId: string;
  clientReference: string;
  paymentId: string;
  status: "succeeded" | "declined";
  declineCode: string | null;
  amountMinor: bigint;
  currency: string;
  createdAt: string;
}

/** A business decision that is final for this intent and is stored for replay. */
export interface Refusal {
  code: ErrorCode;
  detail: string;
  extensions?: Record<string, unknown>;
}

/**
 * Ids derive from the intent (tenant + client_reference) by a fixed rule: a replay of any stage
 * computes the same id and so creates nothing new. Never random per attempt.
 */
export function intentId(prefix: "pay" | "ref", tenantId: string, clientReference: string): string {
  return `${prefix}_${createHash("sha256").update(`${tenantId}\u0000${clientReference}`).digest("hex").slice(0, 24)}`;
}

/** Ledger keys of the API channel: `api:<intent>:<stage>`. */
export function paymentTransferKeyOf(clientReference: string, stage: "debit" | "refund"): string {
  return `api:${clientReference}:${stage}`;
}
