import type { Command } from "commander";
import type { Payment } from "../../payments/payment.ts";
import { findPayment } from "../../payments/payments.ts";
import { paymentView } from "../../payments/payment-view.ts";
import { tenantOrExit, withDatabase } from "../context.ts";
import { CliError, exitCodes } from "../exit-codes.ts";
import { moneyText, printJson, printLine } from "../output.ts";

interface ShowOptions { tenant: string; clientReference?: string; json?: boolean }

/** A payment's line for people: amounts as decimals with their currency. */
function paymentLine(p: Payment): string {
  const refundedText = moneyText(p.refundedMinor, p.currency);
  const refunded = p.refundedMinor > 0n ? `, refunded ${refundedText}` : "";
  const declined = p.declineCode ? ` (${p.declineCode})` : "";
  return `${p.paymentId}  ${p.clientReference}  ${p.status}${declined}`
    + `  ${moneyText(p.amountMinor, p.currency)}  ${p.debtorAccount} -> ${p.creditorAccount}`
    + `${refunded}  created ${p.createdAt}`;
}

/**
 * `clearline payment show`: one payment of the HTTP channel, by its id or the client's reference;
 * with --json exactly as GET /v1/payments/{id} answers (docs/decisions/0107).
 */
export function registerPaymentCommands(program: Command): void {
  const payment = program.command("payment").description("payments of the HTTP API");
  payment
    .command("show [id]")
    .description("one payment by id (pay_...) or by --client-reference")
    .requiredOption("--tenant <tenant>", "tenant name or id")
    .option("--client-reference <reference>", "the initiator's reference instead of the id")
    .option("--json", "machine-readable output")
    .action(async (id: string | undefined, options: ShowOptions) => {
      const reference = options.clientReference;
      if ((id === undefined) === (reference === undefined)) {
        const usage = "name the payment: an id, or --client-reference (not both)";
        throw new CliError(usage, exitCodes.usage);
      }
      const found = await withDatabase(async (db) => findPayment(
        db.pool, (await tenantOrExit(db.pool, options.tenant)).tenantId,
        reference === undefined ? { paymentId: id ?? "" } : { clientReference: reference }));
      if (!found) {
        throw new CliError(`PAYMENT_NOT_FOUND: no payment ${id ?? reference}`, exitCodes.usage);
      }
      if (options.json) return printJson(paymentView(found));
      printLine(paymentLine(found));
    });
}
