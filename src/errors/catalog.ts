import { achErrorCodes } from "./codes/ach.ts";
import { calendarErrorCodes } from "./codes/calendars.ts";
import { commonErrorCodes } from "./codes/common.ts";
import { dbErrorCodes } from "./codes/db.ts";
import { fleetErrorCodes } from "./codes/fleet.ts";
import { httpErrorCodes } from "./codes/http.ts";
import { incidentErrorCodes } from "./codes/incident.ts";
import { fileErrorCodes } from "./codes/files.ts";
import { iso20022ErrorCodes } from "./codes/iso20022.ts";
import { iso8583ErrorCodes } from "./codes/iso8583.ts";
import { ledgerErrorCodes } from "./codes/ledger.ts";
import { operatorErrorCodes } from "./codes/operator.ts";
import { opsErrorCodes } from "./codes/ops.ts";
import { outboxErrorCodes } from "./codes/outbox.ts";
import { partnerErrorCodes } from "./codes/partners.ts";
import { reconErrorCodes } from "./codes/recon.ts";
import { recordErrorCodes } from "./codes/records.ts";
import { renamedCodes } from "./codes/renamed.ts";
import { sourceErrorCodes } from "./codes/sources.ts";

/**
 * The one catalog of error codes. A code is stable once published: clients and operators match
 * on it, and a renamed one keeps its old name as an alias (codeAliases). docs/errors.md is
 * generated from this catalog (`npm run docs:errors`) and a test fails when the two disagree, so
 * no code ships undocumented.
 */
export const errorCatalog = {
  ...commonErrorCodes,
  ...ledgerErrorCodes,
  ...achErrorCodes,
  ...iso20022ErrorCodes,
  ...iso8583ErrorCodes,
  ...httpErrorCodes,
  ...fileErrorCodes,
  ...sourceErrorCodes,
  ...recordErrorCodes,
  ...reconErrorCodes,
  ...incidentErrorCodes,
  ...dbErrorCodes,
  ...operatorErrorCodes,
  ...opsErrorCodes,
  ...partnerErrorCodes,
  ...outboxErrorCodes,
  ...fleetErrorCodes,
  ...calendarErrorCodes,
} as const;

export type ErrorCode = keyof typeof errorCatalog;

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(errorCatalog, code);
}

/** Old names of renamed codes (docs/decisions/0068): each names a code of the catalog. */
export const codeAliases: Readonly<Record<string, ErrorCode>> =
  renamedCodes satisfies Readonly<Record<string, ErrorCode>>;

/**
 * The code a stored or received name stands for: an alias read as the code it was renamed to,
 * any other name as itself. For what was written before a rename (rows, stored answers).
 */
export function currentCode(code: string): string {
  const renamedTo = Object.hasOwn(codeAliases, code) ? codeAliases[code] : undefined;
  return renamedTo ?? code;
}

/** A code and the old names it was stored under: what a query of stored codes matches. */
export function storedNamesOf(code: ErrorCode): string[] {
  return [code, ...Object.keys(codeAliases).filter((alias) => codeAliases[alias] === code)];
}
