import { achErrorCodes } from "./codes/ach.ts";
import { commonErrorCodes } from "./codes/common.ts";
import { dbErrorCodes } from "./codes/db.ts";
import { fleetErrorCodes } from "./codes/fleet.ts";
import { httpErrorCodes } from "./codes/http.ts";
import { incidentErrorCodes } from "./codes/incident.ts";
import { ingestErrorCodes } from "./codes/ingest.ts";
import { iso20022ErrorCodes } from "./codes/iso20022.ts";
import { iso8583ErrorCodes } from "./codes/iso8583.ts";
import { ledgerErrorCodes } from "./codes/ledger.ts";
import { operatorErrorCodes } from "./codes/operator.ts";
import { opsErrorCodes } from "./codes/ops.ts";
import { outboxErrorCodes } from "./codes/outbox.ts";
import { partnerErrorCodes } from "./codes/partners.ts";
import { reconErrorCodes } from "./codes/recon.ts";
import { recordErrorCodes } from "./codes/records.ts";

/**
 * The one catalog of error codes. A code is stable once published: clients and operators match
 * on it. docs/errors.md is generated from this catalog (`npm run docs:errors`) and a test fails
 * when the two disagree, so no code ships undocumented.
 */
export const errorCatalog = {
  ...commonErrorCodes,
  ...ledgerErrorCodes,
  ...achErrorCodes,
  ...iso20022ErrorCodes,
  ...iso8583ErrorCodes,
  ...httpErrorCodes,
  ...ingestErrorCodes,
  ...recordErrorCodes,
  ...reconErrorCodes,
  ...incidentErrorCodes,
  ...dbErrorCodes,
  ...operatorErrorCodes,
  ...opsErrorCodes,
  ...partnerErrorCodes,
  ...outboxErrorCodes,
  ...fleetErrorCodes,
} as const;

export type ErrorCode = keyof typeof errorCatalog;

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(errorCatalog, code);
}
