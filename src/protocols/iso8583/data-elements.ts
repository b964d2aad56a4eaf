// Generated from the field dictionaries in protocols/iso8583/ by `npm run gen:iso8583`;
// do not edit: test/protocols/iso8583/data-elements.test.ts fails when it and they differ.

/** ISO 8583 data element numbers by standard name: `de.retrievalReferenceNumber` is 37. */
export const de = {
  /** DE 2: Primary account number (PAN) */
  primaryAccountNumber: 2,
  /** DE 3: Processing code */
  processingCode: 3,
  /** DE 4: Amount, transaction */
  amountTransaction: 4,
  /** DE 5: Amount, settlement */
  amountSettlement: 5,
  /** DE 6: Amount, cardholder billing */
  amountCardholderBilling: 6,
  /** DE 7: Transmission date and time (MMDDhhmmss) */
  transmissionDateTime: 7,
  /** DE 8: Amount, cardholder billing fee */
  amountCardholderBillingFee: 8,
  /** DE 9: Conversion rate, settlement */
  conversionRateSettlement: 9,
  /** DE 10: Conversion rate, cardholder billing */
  conversionRateCardholderBilling: 10,
  /** DE 11: System trace audit number (STAN) */
  systemTraceAuditNumber: 11,
  /** DE 12: Time, local transaction (hhmmss) */
  timeLocalTransaction: 12,
  /** DE 13: Date, local transaction (MMDD) */
  dateLocalTransaction: 13,
  /** DE 14: Date, expiration (YYMM) */
  dateExpiration: 14,
  /** DE 15: Date, settlement (MMDD) */
  dateSettlement: 15,
  /** DE 16: Date, conversion (MMDD) */
  dateConversion: 16,
  /** DE 17: Date, capture (MMDD) */
  dateCapture: 17,
  /** DE 18: Merchant type (MCC) */
  merchantType: 18,
  /** DE 19: Acquiring institution country code */
  acquiringInstitutionCountryCode: 19,
  /** DE 20: PAN extended, country code */
  panExtendedCountryCode: 20,
  /** DE 21: Forwarding institution country code */
  forwardingInstitutionCountryCode: 21,
  /** DE 22: Point of service entry mode */
  pointOfServiceEntryMode: 22,
  /** DE 23: Card sequence number */
  cardSequenceNumber: 23,
  /** DE 24: Network international identifier (NII) */
  networkInternationalIdentifier: 24,
  /** DE 25: Point of service condition code */
  pointOfServiceConditionCode: 25,
  /** DE 26: Point of service PIN capture code */
  pointOfServicePinCaptureCode: 26,
  /** DE 27: Authorization identification response length */
  authorizationIdentificationResponseLength: 27,
  /** DE 28: Amount, transaction fee */
  amountTransactionFee: 28,
  /** DE 29: Amount, settlement fee */
  amountSettlementFee: 29,
  /** DE 30: Amount, transaction processing fee */
  amountTransactionProcessingFee: 30,
  /** DE 31: Amount, settlement processing fee */
  amountSettlementProcessingFee: 31,
  /** DE 32: Acquiring institution identification code */
  acquiringInstitutionIdentificationCode: 32,
  /** DE 33: Forwarding institution identification code */
  forwardingInstitutionIdentificationCode: 33,
  /** DE 34: Primary account number, extended */
  primaryAccountNumberExtended: 34,
  /** DE 35: Track 2 data */
  track2Data: 35,
  /** DE 36: Track 3 data */
  track3Data: 36,
  /** DE 37: Retrieval reference number (RRN) */
  retrievalReferenceNumber: 37,
  /** DE 38: Authorization identification response */
  authorizationIdentificationResponse: 38,
  /** DE 39: Response code */
  responseCode: 39,
  /** DE 40: Service restriction code */
  serviceRestrictionCode: 40,
  /** DE 41: Card acceptor terminal identification */
  cardAcceptorTerminalIdentification: 41,
  /** DE 42: Card acceptor identification code */
  cardAcceptorIdentificationCode: 42,
  /** DE 43: Card acceptor name/location */
  cardAcceptorNameLocation: 43,
  /** DE 44: Additional response data */
  additionalResponseData: 44,
  /** DE 45: Track 1 data */
  track1Data: 45,
  /** DE 46: Additional data, ISO */
  additionalDataIso: 46,
  /** DE 47: Additional data, national */
  additionalDataNational: 47,
  /** DE 48: Additional data, private */
  additionalDataPrivate: 48,
  /** DE 49: Currency code, transaction */
  currencyCodeTransaction: 49,
  /** DE 50: Currency code, settlement */
  currencyCodeSettlement: 50,
  /** DE 51: Currency code, cardholder billing */
  currencyCodeCardholderBilling: 51,
  /** DE 52: Personal identification number (PIN) data */
  personalIdentificationNumberData: 52,
  /** DE 53: Security related control information */
  securityRelatedControlInformation: 53,
  /** DE 54: Additional amounts */
  additionalAmounts: 54,
  /** DE 55: Integrated circuit card (ICC) system related data (EMV, BER-TLV) */
  integratedCircuitCardSystemRelatedData: 55,
  /** DE 56: Reserved ISO */
  reservedIso56: 56,
  /** DE 57: Reserved national */
  reservedNational57: 57,
  /** DE 58: Reserved national */
  reservedNational58: 58,
  /** DE 59: Reserved national */
  reservedNational59: 59,
  /** DE 60: Reserved national */
  reservedNational60: 60,
  /** DE 61: Reserved private */
  reservedPrivate61: 61,
  /** DE 62: Reserved private */
  reservedPrivate62: 62,
  /** DE 63: Reserved private */
  reservedPrivate63: 63,
  /** DE 64: Message authentication code (MAC) */
  messageAuthenticationCode: 64,
  /** DE 65: Bitmap, extended */
  bitmapExtended: 65,
  /** DE 66: Settlement code */
  settlementCode: 66,
  /** DE 67: Extended payment code */
  extendedPaymentCode: 67,
  /** DE 68: Receiving institution country code */
  receivingInstitutionCountryCode: 68,
  /** DE 69: Settlement institution country code */
  settlementInstitutionCountryCode: 69,
  /** DE 70: Network management information code */
  networkManagementInformationCode: 70,
  /** DE 71: Message number */
  messageNumber: 71,
  /** DE 72: Message number, last */
  messageNumberLast: 72,
  /** DE 73: Date, action (YYMMDD) */
  dateAction: 73,
  /** DE 74: Credits, number */
  creditsNumber: 74,
  /** DE 75: Credits, reversal number */
  creditsReversalNumber: 75,
  /** DE 76: Debits, number */
  debitsNumber: 76,
  /** DE 77: Debits, reversal number */
  debitsReversalNumber: 77,
  /** DE 78: Transfer, number */
  transferNumber: 78,
  /** DE 79: Transfer, reversal number */
  transferReversalNumber: 79,
  /** DE 80: Inquiries, number */
  inquiriesNumber: 80,
  /** DE 81: Authorizations, number */
  authorizationsNumber: 81,
  /** DE 82: Credits, processing fee amount */
  creditsProcessingFeeAmount: 82,
  /** DE 83: Credits, transaction fee amount */
  creditsTransactionFeeAmount: 83,
  /** DE 84: Debits, processing fee amount */
  debitsProcessingFeeAmount: 84,
  /** DE 85: Debits, transaction fee amount */
  debitsTransactionFeeAmount: 85,
  /** DE 86: Credits, amount */
  creditsAmount: 86,
  /** DE 87: Credits, reversal amount */
  creditsReversalAmount: 87,
  /** DE 88: Debits, amount */
  debitsAmount: 88,
  /** DE 89: Debits, reversal amount */
  debitsReversalAmount: 89,
  /** DE 90: Original data elements */
  originalDataElements: 90,
  /** DE 91: File update code */
  fileUpdateCode: 91,
  /** DE 92: File security code */
  fileSecurityCode: 92,
  /** DE 93: Response indicator */
  responseIndicator: 93,
  /** DE 94: Service indicator */
  serviceIndicator: 94,
  /** DE 95: Replacement amounts */
  replacementAmounts: 95,
  /** DE 96: Message security code */
  messageSecurityCode: 96,
  /** DE 97: Amount, net settlement */
  amountNetSettlement: 97,
  /** DE 98: Payee */
  payee: 98,
  /** DE 99: Settlement institution identification code */
  settlementInstitutionIdentificationCode: 99,
  /** DE 100: Receiving institution identification code */
  receivingInstitutionIdentificationCode: 100,
  /** DE 101: File name */
  fileName: 101,
  /** DE 102: Account identification 1 */
  accountIdentification1: 102,
  /** DE 103: Account identification 2 */
  accountIdentification2: 103,
  /** DE 104: Transaction description */
  transactionDescription: 104,
  /** DE 105: Reserved ISO */
  reservedIso105: 105,
  /** DE 106: Reserved ISO */
  reservedIso106: 106,
  /** DE 107: Reserved ISO */
  reservedIso107: 107,
  /** DE 108: Reserved ISO */
  reservedIso108: 108,
  /** DE 109: Reserved ISO */
  reservedIso109: 109,
  /** DE 110: Reserved ISO */
  reservedIso110: 110,
  /** DE 111: Reserved ISO */
  reservedIso111: 111,
  /** DE 112: Reserved national */
  reservedNational112: 112,
  /** DE 113: Reserved national */
  reservedNational113: 113,
  /** DE 114: Reserved national */
  reservedNational114: 114,
  /** DE 115: Reserved national */
  reservedNational115: 115,
  /** DE 116: Reserved national */
  reservedNational116: 116,
  /** DE 117: Reserved national */
  reservedNational117: 117,
  /** DE 118: Reserved national */
  reservedNational118: 118,
  /** DE 119: Reserved national */
  reservedNational119: 119,
  /** DE 120: Reserved private */
  reservedPrivate120: 120,
  /** DE 121: Reserved private */
  reservedPrivate121: 121,
  /** DE 122: Reserved private */
  reservedPrivate122: 122,
  /** DE 123: Reserved private */
  reservedPrivate123: 123,
  /** DE 124: Reserved private */
  reservedPrivate124: 124,
  /** DE 125: Reserved private */
  reservedPrivate125: 125,
  /** DE 126: Reserved private */
  reservedPrivate126: 126,
  /** DE 127: Reserved private */
  reservedPrivate127: 127,
  /** DE 128: Message authentication code (MAC), secondary */
  messageAuthenticationCodeSecondary: 128,
} as const;

export type DataElementName = keyof typeof de;
