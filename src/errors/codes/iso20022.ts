// Codes of the iso20022 channel; prefix each with the channel's name in capitals.
export const iso20022ErrorCodes = {
  ISO20022_SETTLEMENT_DAY_CLOSED:
    "The settlement date is a day its currency's clearing system is closed (decision 0101).",
  ISO20022_DOCTYPE_REFUSED: "The XML carries a <!DOCTYPE> (DTD); it is refused before parsing so no external entity or entity expansion can run.",
  ISO20022_XML_MALFORMED: "The input is not well-formed XML (unclosed tag, undefined entity, bad character); reading stopped at the position given.",
  ISO20022_ENCODING_UNSUPPORTED: "The XML declaration names an encoding other than UTF-8, which ISO 20022 requires.",
  ISO20022_DEPTH_EXCEEDED: "Elements are nested deeper than the configured maximum depth; reading stopped.",
  ISO20022_ELEMENT_TEXT_TOO_LONG: "A text, attribute value or comment exceeds the configured maximum length; reading stopped.",
  ISO20022_TRANSACTIONS_TOO_MANY: "The file holds more transactions than the configured maximum; reading stopped.",
  ISO20022_TRANSACTION_TOO_LARGE: "One transaction, group header or payment-information block holds more elements than the configured maximum.",
  ISO20022_DOCUMENT_MISSING: "No ISO 20022 <Document> element was found (bare, in an AppHdr envelope or in a FedNow wrapper).",
  ISO20022_MESSAGE_UNKNOWN: "The Document's namespace does not name an ISO 20022 message (family.nnn.nnn.nn).",
  ISO20022_MESSAGE_UNSUPPORTED: "The message family is not one clearline reads (see protocols/iso20022/).",
  ISO20022_VERSION_UNSUPPORTED: "The message version is not among the versions mapped for its family in protocols/iso20022/.",
  ISO20022_ROOT_UNEXPECTED: "The Document's child is not the message root its namespace announces.",
  ISO20022_NAMESPACE_MISSING: "Warning: the Document has no namespace; the message was identified by the AppHdr's MsgDefIdr or, without one, by its root element (read with the newest version clearline maps).",
  ISO20022_FX_RATE_UNAVAILABLE: "An equivalent amount (Amt/EqvtAmt) is in another currency than the debtor account it would be taken from; clearline holds no exchange rate, so the transaction is rejected rather than converted at a guessed rate (docs/decisions/0023).",
  ISO20022_APPHDR_MISMATCH: "The business application header's MsgDefIdr names another message than the Document's namespace; the namespace is used.",
  ISO20022_FIELD_MISSING: "A mandatory element is absent or empty.",
  ISO20022_FIELD_TOO_LONG: "An element's text is longer than its ISO 20022 data type allows.",
  ISO20022_FIELD_INVALID: "An element's text does not match its ISO 20022 data type (date, count, decimal, code).",
  ISO20022_UETR_INVALID: "The UETR is not a lowercase UUID version 4 (8-4-4-4-12 hexadecimal digits).",
  ISO20022_BIC_INVALID: "A BIC is not 8 or 11 characters of the ISO 9362 pattern.",
  ISO20022_NBOFTXS_MISMATCH: "NbOfTxs (or a statement's entry count) differs from the number of transactions the file actually holds.",
  ISO20022_CTRLSUM_MISMATCH: "CtrlSum (or a statement's entry sum) differs from the exact sum of the amounts the file actually holds.",
  ISO20022_TOTAL_AMOUNT_MISMATCH:
    "A group header total with a currency (pacs.008 TtlIntrBkSttlmAmt, pacs.004 "
      + "TtlRtrdIntrBkSttlmAmt) differs from the exact sum of the transactions' amounts; checked "
      + "whether or not CtrlSum is present.",
  ISO20022_TOTAL_CURRENCY_MISMATCH:
    "A transaction's amount is in another currency than the group header total it is summed "
      + "into (pacs.008 TtlIntrBkSttlmAmt); the position is that amount's Ccy.",
  ISO20022_KEY_UNAVAILABLE: "No natural key can be formed for the transaction (identifiers absent or NOTPROVIDED); it cannot be deduplicated safely.",
  ISO20022_VALUE_DATE_MISSING: "Neither the transaction nor its header carries a settlement, execution, value or creation date.",
  ISO20022_STATUS_REASON_MISSING: "A rejected (RJCT) transaction status must carry a reason code.",
} as const satisfies Record<string, string>;
