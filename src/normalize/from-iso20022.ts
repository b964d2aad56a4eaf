import { fail, ok, type Result } from "../errors/finding.ts";
import type { ErrorCode } from "../errors/catalog.ts";
import { mappingFor } from "../protocols/iso20022/mapping.ts";
import { decimalToMinor } from "../protocols/iso4217/currency.ts";
import type {
  FieldValues, Iso20022Finding, Iso20022Header, Iso20022Transaction,
} from "../protocols/iso20022/types.ts";
import type { CanonicalRecord } from "./canonical-record.ts";
import { fingerprintOf } from "./fingerprint.ts";

/**
 * ISO 20022 transaction -> CanonicalRecord. Natural keys follow docs/decisions/0077:
 *   pacs.008  UETR + instructing agent + instructed agent; without UETR: instructing agent + TxId;
 *             else instructing agent + MsgId + EndToEndId + InstrId
 *   pain.001  initiating party + debtor account + PmtInfId + EndToEndId (+ UETR)
 *   pacs.004  instructing agent + RtrId, linked to the pacs.008 it returns
 *   pacs.002  a status event (ACSC, RJCT, ...) of an original pacs.008
 *   camt.056  a cancellation request (a case, not a posting) of an original pacs.008
 * `NOTPROVIDED` is never part of a key. A key that cannot be formed is a finding, never a guess.
 */
export interface NormalizeOptions {
  tenantId: string;
  fileId?: string;
}

const notProvided = "NOTPROVIDED";
// ISO 4217 "no currency involved": status events and requests that carry no amount.
const noCurrency = "XXX";

function keyPart(value: string): string {
  return value.replace(/%/g, "%25").replace(/:/g, "%3A");
}

function key(...parts: string[]): string {
  return ["iso20022", ...parts.map(keyPart)].join(":");
}

interface View {
  header: Iso20022Header;
  transaction: Iso20022Transaction;
  family: string;
  /**
   * A transaction value, else the payment-information/statement block's, else the header's;
   * NOTPROVIDED reads as absent.
   */
  get(name: string, from?: "transaction" | "context" | "header" | "any"): string | undefined;
  agent(prefix: string, from?: "transaction" | "context" | "header" | "any"): string | undefined;
}

function usable(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed === "" || trimmed === notProvided ? undefined : value;
}

/**
 * A pacs.008 leg's instructed amount (InstdAmt) and the sum of the charges its agents deducted
 * (ChrgsInf/Amt), in minor units, for relating legs of one payment (docs/decisions/0108). The
 * charges are summed only when every one is in the settlement amount's currency; otherwise
 * `chargesMinor` is absent and the leg's amounts cannot be shown to add up.
 */
function legAmountsOf(view: View): Record<string, string> {
  const settlementCurrency = view.get("IntrBkSttlmAmt@Ccy", "transaction");
  const instructed = view.get("InstdAmt", "transaction");
  const instructedCurrency = view.get("InstdAmt@Ccy", "transaction");
  if (instructed === undefined || instructedCurrency === undefined) return {};
  const instructedMinor = decimalToMinor(instructed, instructedCurrency);
  if (!instructedMinor.ok) return {};
  const amounts: Record<string, string> = {
    instructedAmountMinor: String(instructedMinor.value), instructedCurrency,
  };
  let chargesMinor = 0n;
  for (let n = 1; ; n++) {
    const name = n === 1 ? "ChrgsInfAmt" : `ChrgsInfAmt.${n}`;
    const charge = view.get(name, "transaction");
    if (charge === undefined) break;
    const currency = view.get(`${name}@Ccy`, "transaction");
    const minor = currency === settlementCurrency && currency !== undefined
      ? decimalToMinor(charge, currency) : undefined;
    if (minor === undefined || !minor.ok) return amounts;
    chargesMinor += minor.value;
  }
  return { ...amounts, chargesMinor: String(chargesMinor) };
}

function makeView(header: Iso20022Header, transaction: Iso20022Transaction): View {
  const blocks: Record<string, FieldValues | undefined> = {
    transaction, context: transaction.context, header,
  };
  const order = ["transaction", "context", "header"];
  const get = (
    name: string, from: "transaction" | "context" | "header" | "any" = "any",
  ): string | undefined => {
    for (const block of from === "any" ? order : [from]) {
      const value = usable(blocks[block]?.values[name]);
      if (value !== undefined) return value;
    }
    return undefined;
  };
  return {
    header, transaction, family: header.message.family, get,
    agent: (prefix, from = "any") => get(`${prefix}BIC`, from) ?? get(`${prefix}MmbId`, from),
  };
}

function appHeaderParty(view: View, party: "Fr" | "To"): string | undefined {
  const values = view.header.appHeader?.values ?? {};
  return usable(values[`${party}BIC`]) ?? usable(values[`${party}MmbId`]);
}

function missingKey(view: View, message: string): Iso20022Finding[] {
  return [problem(view, "ISO20022_KEY_UNAVAILABLE", message)];
}

function problem(
  view: View, code: ErrorCode, message: string, xmlPath = view.transaction.xmlPath,
): Iso20022Finding {
  return {
    code, severity: "error", message,
    position: { xmlPath, transactionIndex: view.transaction.index }, scope: "transaction",
  };
}

/** The natural key of the pacs.008 a status, return or cancellation points at. */
function creditKey(
  agents: { instructing?: string; instructed?: string },
  ids: { uetr?: string; txId?: string; msgId?: string; endToEndId?: string; instrId?: string },
): string | undefined {
  const { instructing, instructed } = agents;
  if (ids.uetr && instructing && instructed) {
    return key("pacs.008", "uetr", ids.uetr, instructing, instructed);
  }
  if (instructing && ids.txId) return key("pacs.008", "txid", instructing, ids.txId);
  if (instructing && ids.msgId && (ids.endToEndId || ids.instrId)) {
    return key("pacs.008", "msg", instructing, ids.msgId, ids.endToEndId ?? "", ids.instrId ?? "");
  }
  return undefined;
}

interface Shape {
  naturalKey: string;
  intentId: string;
  original?: string;
  // transaction field holding the amount; none: a non-monetary event (0)
  amountField?: string;
  dateFields: string[];       // first present wins (ISO date or date-time; the date part is kept)
  economic: Record<string, string | undefined>;
  attributes: Record<string, string | undefined>;
}

type Shaper = (view: View) => Result<Shape, Iso20022Finding[]>;

const originalIds = (view: View) => ({
  uetr: view.get("OrgnlUETR", "transaction"),
  txId: view.get("OrgnlTxId", "transaction"),
  msgId: view.get("OrgnlMsgId"),
  endToEndId: view.get("OrgnlEndToEndId", "transaction"),
  instrId: view.get("OrgnlInstrId", "transaction"),
});

const originalAttributes = (view: View) => ({
  originalMsgId: view.get("OrgnlMsgId"),
  originalEndToEndId: view.get("OrgnlEndToEndId", "transaction"),
  originalTxId: view.get("OrgnlTxId", "transaction"),
  originalUetr: view.get("OrgnlUETR", "transaction"),
  originalInstrId: view.get("OrgnlInstrId", "transaction"),
});

const shapers: Record<string, Shaper> = {
  "pacs.008": (view) => {
    const instructing = view.agent("InstgAgt") ?? appHeaderParty(view, "Fr");
    const instructed = view.agent("InstdAgt") ?? appHeaderParty(view, "To");
    const uetr = view.get("UETR", "transaction");
    const endToEndId = view.get("EndToEndId", "transaction");
    const txId = view.get("TxId", "transaction");
    const instrId = view.get("InstrId", "transaction");
    const naturalKey = creditKey(
      { instructing, instructed },
      { uetr, txId, msgId: view.get("MsgId", "header"), endToEndId, instrId },
    );
    if (!naturalKey) {
      return fail(
        missingKey(
          view,
          "pacs.008 needs an instructing agent with a UETR (and instructed agent), a TxId, or " +
          "MsgId + EndToEndId/InstrId",
        ),
      );
    }
    return ok({
      naturalKey,
      intentId: uetr ?? endToEndId ?? txId ?? instrId ?? naturalKey,
      amountField: "IntrBkSttlmAmt",
      dateFields: ["IntrBkSttlmDt", "CreDtTm"],
      economic: {
        endToEndId, uetr, debtorAccount: view.get("DbtrAcctIBAN") ?? view.get("DbtrAcctOthrId"),
        creditorAccount: view.get("CdtrAcctIBAN") ?? view.get("CdtrAcctOthrId"),
        debtorAgent: view.agent("DbtrAgt"), creditorAgent: view.agent("CdtrAgt"),
        instructedAmount: view.get("InstdAmt"), instructedCurrency: view.get("InstdAmt@Ccy"),
        chargeBearer: view.get("ChrgBr"), remittance: view.get("RmtInfUstrd"),
      },
      attributes: {
        uetr, endToEndId, txId, instrId, instructingAgent: instructing, instructedAgent: instructed,
        messageId: view.get("MsgId", "header"),
        debtorAccount: view.get("DbtrAcctIBAN") ?? view.get("DbtrAcctOthrId"),
        creditorAccount: view.get("CdtrAcctIBAN") ?? view.get("CdtrAcctOthrId"),
        ...legAmountsOf(view),
      },
    });
  },
  "pain.001": (view) => {
    const initiator = initiatingParty(view);
    const debtorAccount =
      view.get("DbtrAcctIBAN", "context") ?? view.get("DbtrAcctOthrId", "context");
    const paymentInformationId = view.get("PmtInfId", "context");
    const endToEndId = view.get("EndToEndId", "transaction");
    const instrId = view.get("InstrId", "transaction");
    const uetr = view.get("UETR", "transaction");
    const reference = endToEndId ?? (instrId ? `instr:${instrId}` : undefined);
    if (!initiator || !debtorAccount || !paymentInformationId || !reference) {
      return fail(
        missingKey(
          view,
          "pain.001 needs the initiating party, the debtor account, PmtInfId and an EndToEndId " +
          "(or InstrId)",
        ),
      );
    }
    const equivalent = equivalentAmount(view);
    if (!equivalent.ok) return equivalent;
    const creditorAccount = view.get("CdtrAcctIBAN") ?? view.get("CdtrAcctOthrId");
    return ok({
      naturalKey: uetr
        ? key("pain.001", initiator, debtorAccount, paymentInformationId, reference, uetr)
        : key("pain.001", initiator, debtorAccount, paymentInformationId, reference),
      intentId: uetr ?? endToEndId ?? instrId ?? paymentInformationId,
      amountField: "InstdAmt",
      dateFields: ["ReqdExctnDt", "CreDtTm"],
      economic: {
        endToEndId,
        uetr,
        debtorAccount,
        creditorAccount,
        debtorAgent: view.agent("DbtrAgt"),
        creditorAgent: view.agent("CdtrAgt"),
        remittance: view.get("RmtInfUstrd"),
        // Only an equivalent amount adds the field: fingerprints of plain instructed amounts stay
        // as they were.
        ...(equivalent.value === undefined ? {} : { instructedCurrency: equivalent.value }),
      },
      attributes: {
        uetr, endToEndId, instrId, paymentInformationId, initiatingParty: initiator, debtorAccount,
        creditorAccount, messageId: view.get("MsgId", "header"),
        instructedCurrency: equivalent.value,
      },
    });
  },
  "pain.008": (view) => {
    const initiator = initiatingParty(view);
    const creditorAccount =
      view.get("CdtrAcctIBAN", "context") ?? view.get("CdtrAcctOthrId", "context");
    const debtorAccount =
      view.get("DbtrAcctIBAN", "transaction") ?? view.get("DbtrAcctOthrId", "transaction");
    const paymentInformationId = view.get("PmtInfId", "context");
    const endToEndId = view.get("EndToEndId", "transaction");
    const instrId = view.get("InstrId", "transaction");
    const uetr = view.get("UETR", "transaction");
    const reference = endToEndId ?? (instrId ? `instr:${instrId}` : undefined);
    if (!initiator || !creditorAccount || !paymentInformationId || !reference) {
      return fail(
        missingKey(
          view,
          "pain.008 needs the initiating party, the creditor account, PmtInfId and an EndToEndId " +
          "(or InstrId)",
        ),
      );
    }
    const parts = uetr
      ? [initiator, creditorAccount, paymentInformationId, reference, uetr]
      : [initiator, creditorAccount, paymentInformationId, reference];
    const mandateId = view.get("MndtId", "transaction");
    return ok({
      naturalKey: key("pain.008", ...parts),
      intentId: uetr ?? endToEndId ?? instrId ?? paymentInformationId,
      amountField: "InstdAmt",
      dateFields: ["ReqdColltnDt", "CreDtTm"],
      economic: {
        endToEndId, uetr, debtorAccount, creditorAccount, mandateId,
        debtorAgent: view.agent("DbtrAgt"), remittance: view.get("RmtInfUstrd"),
      },
      attributes: {
        uetr, endToEndId, instrId, paymentInformationId, initiatingParty: initiator, debtorAccount,
        creditorAccount, mandateId, sequenceType: view.get("SeqTp", "context"),
        messageId: view.get("MsgId", "header"),
      },
    });
  },
  "pain.002": (view) => {
    const status =
      view.get("TxSts", "transaction") ??
      view.get("PmtInfSts", "context") ??
      view.get("GrpSts", "header");
    const originalMessageId = view.get("OrgnlMsgId", "header");
    const originalPaymentInformationId = view.get("OrgnlPmtInfId", "context");
    const originalEndToEndId = view.get("OrgnlEndToEndId", "transaction");
    if (!status) {
      return fail([
        problem(
          view, "ISO20022_FIELD_MISSING",
          "a payment status report needs TxSts, PmtInfSts or GrpSts",
        ),
      ]);
    }
    if (!originalMessageId || !originalPaymentInformationId) {
      return fail(missingKey(view, "pain.002 needs OrgnlMsgId and OrgnlPmtInfId"));
    }
    const reference =
      originalEndToEndId ?? view.get("StsId", "transaction") ?? String(view.transaction.index);
    return ok({
      naturalKey: key(
        "pain.002", status, originalMessageId, originalPaymentInformationId, reference,
      ),
      intentId:
        view.get("OrgnlUETR", "transaction") ?? originalEndToEndId ?? originalPaymentInformationId,
      amountField: "OrgnlInstdAmt",
      dateFields: ["OrgnlReqdExctnDt", "CreDtTm"],
      economic: {
        status, reason: view.get("StsRsnCd"), originalMessageId, originalPaymentInformationId,
        originalEndToEndId,
      },
      attributes: {
        status, reason: view.get("StsRsnCd"), originalMsgId: originalMessageId,
        originalPaymentInformationId, originalEndToEndId,
        originalUetr: view.get("OrgnlUETR", "transaction"), messageId: view.get("MsgId", "header"),
      },
    });
  },
  "pacs.004": (view) => {
    const instructing = view.agent("InstgAgt") ?? appHeaderParty(view, "Fr");
    const instructed = view.agent("InstdAgt") ?? appHeaderParty(view, "To");
    const returnId = view.get("RtrId", "transaction");
    const ids = originalIds(view);
    const messageId = view.get("MsgId", "header");
    const originalRef = ids.uetr ?? ids.txId ?? ids.endToEndId ?? ids.instrId;
    // Without a RtrId the return's own message identifies it: a re-sent file with a new MsgId then
    // shows up as a new key with equal content, which the pipeline holds as suspect.
    const naturalKey =
      instructing && returnId
        ? key("pacs.004", instructing, returnId)
        : instructing && messageId && originalRef
          ? key("pacs.004", "msg", instructing, messageId, originalRef)
          : undefined;
    if (!naturalKey) {
      return fail(
        missingKey(
          view,
          "pacs.004 needs an instructing agent and a RtrId (or MsgId and an original identifier)",
        ),
      );
    }
    // A return flows back: the original's instructing agent is the return's instructed agent.
    const original = creditKey({ instructing: instructed, instructed: instructing }, ids);
    const shape: Shape = {
      naturalKey,
      intentId: ids.uetr ?? ids.endToEndId ?? returnId ?? naturalKey,
      amountField: "RtrdIntrBkSttlmAmt",
      dateFields: ["IntrBkSttlmDt", "CreDtTm"],
      economic: {
        returnId, originalUetr: ids.uetr, originalEndToEndId: ids.endToEndId,
        originalTxId: ids.txId, reason: view.get("RtrRsnCd"), original,
      },
      attributes: {
        returnId, ...originalAttributes(view), reason: view.get("RtrRsnCd"),
        instructingAgent: instructing, instructedAgent: instructed, messageId,
      },
    };
    if (original) shape.original = original;
    return ok(shape);
  },
  "pacs.002": (view) => {
    const instructing = view.agent("InstgAgt") ?? appHeaderParty(view, "Fr");
    const instructed = view.agent("InstdAgt") ?? appHeaderParty(view, "To");
    const status = view.get("TxSts", "transaction") ?? view.get("GrpSts", "header");
    const ids = originalIds(view);
    // The report goes back to the sender of the original: its instructed agent instructed the
    // original.
    const original = creditKey({ instructing: instructed, instructed: instructing }, ids);
    const messageId = view.get("MsgId", "header");
    if (!status) {
      return fail([problem(view, "ISO20022_FIELD_MISSING", "a status event needs TxSts")]);
    }
    const naturalKey = original
      ? key("pacs.002", status, original)
      : instructing && messageId
        ? key(
            "pacs.002",
            "msg",
            instructing,
            messageId,
            view.get("StsId", "transaction") ?? String(view.transaction.index),
          )
        : undefined;
    if (!naturalKey) {
      return fail(
        missingKey(view, "pacs.002 needs original identifiers or an instructing agent and MsgId"),
      );
    }
    const shape: Shape = {
      naturalKey,
      intentId: ids.uetr ?? ids.endToEndId ?? ids.txId ?? naturalKey,
      amountField: "OrgnlIntrBkSttlmAmt",
      dateFields: ["FctvIntrBkSttlmDt", "AccptncDtTm", "CreDtTm"],
      economic: {
        status, reason: view.get("StsRsnCd"), original, originalUetr: ids.uetr,
        originalEndToEndId: ids.endToEndId,
      },
      attributes: {
        status, reason: view.get("StsRsnCd"), ...originalAttributes(view),
        instructingAgent: instructing, instructedAgent: instructed, messageId,
      },
    };
    if (original) shape.original = original;
    return ok(shape);
  },
  "camt.056": (view) => {
    const assigner =
      view.agent("Assgnr", "transaction") ??
      view.agent("Assgnr", "header") ??
      appHeaderParty(view, "Fr");
    const assignee = view.agent("Assgne", "header") ?? appHeaderParty(view, "To");
    const cancellationId = view.get("CxlId", "transaction");
    const assignmentId = view.get("AssgnmtId", "header");
    const ids = originalIds(view);
    const originalRef = ids.uetr ?? ids.txId ?? ids.endToEndId ?? ids.instrId;
    const naturalKey =
      assigner && cancellationId
        ? key("camt.056", assigner, cancellationId)
        : assigner && assignmentId && originalRef
          ? key("camt.056", "assignment", assigner, assignmentId, originalRef)
          : undefined;
    if (!naturalKey) {
      return fail(
        missingKey(
          view,
          "camt.056 needs the assigner and a CxlId (or the assignment Id and an original " +
          "identifier)",
        ),
      );
    }
    // The sender asks to cancel its own payment: it instructed the original, the assignee received
    // it.
    const original = creditKey({ instructing: assigner, instructed: assignee }, ids);
    const shape: Shape = {
      naturalKey,
      intentId: ids.uetr ?? ids.endToEndId ?? cancellationId ?? naturalKey,
      amountField: "OrgnlIntrBkSttlmAmt",
      dateFields: ["OrgnlIntrBkSttlmDt", "CreDtTm"],
      economic: {
        original, reason: view.get("CxlRsnCd"), originalUetr: ids.uetr,
        originalEndToEndId: ids.endToEndId,
      },
      attributes: {
        cancellationId, caseId: view.get("CaseId"), assignmentId, ...originalAttributes(view),
        reason: view.get("CxlRsnCd"), assigner, assignee,
      },
    };
    if (original) shape.original = original;
    return ok(shape);
  },
  "camt.053": (view) => statementEntry(view),
  "camt.054": (view) => statementEntry(view),
  "pacs.028": (view) => {
    const instructing = view.agent("InstgAgt") ?? appHeaderParty(view, "Fr");
    const messageId = view.get("MsgId", "header");
    const ids = originalIds(view);
    if (!instructing || !messageId) {
      return fail(missingKey(view, "pacs.028 needs an instructing agent and MsgId"));
    }
    return ok({
      naturalKey: key(
        "pacs.028", instructing, messageId,
        view.get("StsReqId", "transaction") ?? String(view.transaction.index),
      ),
      intentId: ids.uetr ?? ids.endToEndId ?? messageId,
      dateFields: ["CreDtTm"],
      economic: {
        originalUetr: ids.uetr, originalEndToEndId: ids.endToEndId, originalMsgId: ids.msgId,
      },
      attributes: { ...originalAttributes(view), instructingAgent: instructing, messageId },
    });
  },
  "camt.029": (view) => {
    const assigner = view.agent("Assgnr", "header") ?? appHeaderParty(view, "Fr");
    const assignmentId = view.get("AssgnmtId", "header");
    const ids = originalIds(view);
    if (!assigner || !assignmentId) {
      return fail(missingKey(view, "camt.029 needs the assigner and the assignment Id"));
    }
    return ok({
      naturalKey: key(
        "camt.029", assigner, assignmentId,
        view.get("CxlStsId", "transaction") ?? String(view.transaction.index),
      ),
      intentId: ids.uetr ?? ids.endToEndId ?? assignmentId,
      dateFields: ["CreDtTm"],
      economic: {
        confirmation: view.get("StsConf", "header"), originalUetr: ids.uetr,
        originalEndToEndId: ids.endToEndId,
      },
      attributes: {
        ...originalAttributes(view), confirmation: view.get("StsConf", "header"),
        caseId: view.get("RslvdCaseId", "header"), assigner, assignmentId,
      },
    });
  },
};

function initiatingParty(view: View): string | undefined {
  return (
    view.get("InitgPtyOrgId", "header") ??
    view.get("InitgPtyPrvtId", "header") ??
    view.get("InitgPtyNm", "header")
  );
}

/**
 * Amt/EqvtAmt (docs/decisions/0023): the amount is the equivalent amount in its own currency (what
 * leaves the debtor's account) and the currency it is to be transferred in is recorded. clearline
 * converts nothing: when the debtor account states another currency than the equivalent amount's,
 * the transaction is rejected (ISO20022_FX_RATE_UNAVAILABLE) instead of posted at a guessed rate.
 */
function equivalentAmount(view: View): Result<string | undefined, Iso20022Finding[]> {
  const transferCurrency = view.get("EqvtAmtCcyOfTrf", "transaction");
  if (transferCurrency === undefined) return ok(undefined);
  const amountCurrency = view.transaction.values["InstdAmt@Ccy"];
  const accountCurrency = view.get("DbtrAcctCcy", "context");
  if (
    accountCurrency !== undefined && amountCurrency !== undefined &&
    accountCurrency !== amountCurrency
  ) {
    return fail([
      problem(
        view, "ISO20022_FX_RATE_UNAVAILABLE",
        `the equivalent amount is in ${amountCurrency} but the debtor account is in ` +
        `${accountCurrency}; no exchange rate is applied`,
        view.transaction.xmlPaths["InstdAmt"] ?? view.transaction.xmlPath,
      ),
    ]);
  }
  return ok(transferCurrency);
}

function statementEntry(view: View): Result<Shape, Iso20022Finding[]> {
  const account = view.get("AcctIBAN", "context") ?? view.get("AcctOthrId", "context");
  const servicerReference = view.get("AcctSvcrRef", "transaction");
  const entryReference = view.get("NtryRef", "transaction");
  const statementId = view.get("Id", "context");
  if (!account) {
    return fail(missingKey(view, "a statement entry needs the account it was booked on"));
  }
  // Servicer references repeat across entries in real statements, so the entry reference joins
  // them; an entry with neither is identified by its statement and its place in it.
  const naturalKey =
    servicerReference || entryReference
      ? key(view.family, account, servicerReference ?? "", entryReference ?? "")
      : statementId
        ? key(view.family, account, "statement", statementId, String(view.transaction.index))
        : undefined;
  if (!naturalKey) {
    return fail(missingKey(view, "a statement entry needs AcctSvcrRef, NtryRef or a statement Id"));
  }
  const creditDebit = view.get("CdtDbtInd", "transaction");
  return ok({
    naturalKey,
    intentId:
      view.get("UETR", "transaction") ??
      view.get("EndToEndId", "transaction") ??
      servicerReference ??
      entryReference ??
      naturalKey,
    amountField: "Amt",
    dateFields: ["ValDt", "BookgDt", "CreDtTm"],
    economic: {
      account,
      creditDebit,
      reversal: view.get("RvslInd", "transaction"),
      status: view.get("Sts", "transaction"),
      endToEndId: view.get("EndToEndId", "transaction"),
      bankTransactionCode: [
        view.get("BkTxCdDomn"), view.get("BkTxCdFmly"), view.get("BkTxCdSubFmly"),
        view.get("BkTxCdPrtry"),
      ]
        .filter(Boolean)
        .join("/"),
    },
    attributes: {
      account, statementId, creditDebitIndicator: creditDebit,
      reversal: view.get("RvslInd", "transaction"), entryStatus: view.get("Sts", "transaction"),
      accountServicerReference: servicerReference, entryReference,
      endToEndId: view.get("EndToEndId", "transaction"), uetr: view.get("UETR", "transaction"),
      txId: view.get("TxId", "transaction"), returnReason: view.get("RtrRsnCd", "transaction"),
    },
  });
}

function datePart(value: string): string | undefined {
  const match = /^(\d{4}-\d{2}-\d{2})/.exec(value);
  return match?.[1];
}

function definedOnly(values: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(values))
    if (value !== undefined && value !== "") out[name] = value;
  return out;
}

/**
 * One transaction -> one CanonicalRecord, or the findings that keep it out. A transaction that
 * already carries an error finding from the reader is not normalized (its findings come back).
 */
export function normalizeIso20022Transaction(
  header: Iso20022Header, transaction: Iso20022Transaction, options: NormalizeOptions,
): Result<CanonicalRecord, Iso20022Finding[]> {
  const errors = transaction.findings.filter((f) => f.severity === "error");
  if (errors.length > 0) return fail(errors);
  const view = makeView(header, transaction);
  const shaper = shapers[view.family];
  if (!shaper) {
    return fail([
      problem(
        view, "ISO20022_MESSAGE_UNSUPPORTED", `${header.message.id} has no normalization rule`,
      ),
    ]);
  }
  const shaped = shaper(view);
  if (!shaped.ok) return shaped;
  const shape = shaped.value;
  let amount = 0n;
  let currency = noCurrency;
  const amountText =
    shape.amountField === undefined ? undefined : transaction.values[shape.amountField];
  const amountCurrency =
    shape.amountField === undefined ? undefined : transaction.values[`${shape.amountField}@Ccy`];
  if (amountText !== undefined && amountCurrency !== undefined) {
    const xmlPath = transaction.xmlPaths[shape.amountField ?? ""] ?? transaction.xmlPath;
    const minor = decimalToMinor(amountText, amountCurrency, {
      xmlPath, transactionIndex: transaction.index,
    });
    if (!minor.ok) return fail([{ ...minor.error, scope: "transaction" }]);
    amount = minor.value;
    currency = amountCurrency;
  }
  let valueDate: string | undefined;
  for (const field of shape.dateFields) {
    const value = view.get(field);
    valueDate = value === undefined ? undefined : datePart(value);
    if (valueDate) break;
  }
  if (!valueDate) {
    return fail([
      problem(view, "ISO20022_VALUE_DATE_MISSING", `no date among ${shape.dateFields.join(", ")}`),
    ]);
  }
  const kind = kindOf(header);
  const record: CanonicalRecord = {
    tenantId: options.tenantId,
    channel: "iso20022",
    naturalKey: shape.naturalKey,
    intentId: shape.intentId,
    kind,
    amount,
    currency,
    valueDate,
    fingerprint: fingerprintOf({
      kind, amountMinor: amount, currency, valueDate, ...shape.economic,
    }),
    source:
      options.fileId === undefined
        ? { position: transaction.xmlPath }
        : { fileId: options.fileId, position: transaction.xmlPath },
    attributes: definedOnly({ messageType: header.message.id, ...shape.attributes }),
  };
  if (shape.original !== undefined) record.original = shape.original;
  // The interbank settlement date (or the statement's booking date) IS the settlement date, as
  // written: moving it is the clearing system's decision (docs/decisions/0101).
  const settlementField = shape.dateFields.find((field) =>
    settlementDateFields.has(field) && view.get(field) !== undefined);
  const settlementValue = settlementField === undefined ? undefined : view.get(settlementField);
  const settlementDate = settlementValue === undefined ? undefined : datePart(settlementValue);
  if (settlementDate) record.settlementDate = settlementDate;
  return ok(record);
}

const settlementDateFields: ReadonlySet<string> = new Set([
  "IntrBkSttlmDt", "FctvIntrBkSttlmDt", "OrgnlIntrBkSttlmDt", "BookgDt",
]);

function kindOf(header: Iso20022Header): string {
  return mappingFor(header.message.family, header.message.version)?.kind ?? header.message.family;
}
