import { assert } from "../../src/assert.ts";
import { routingCheckDigit } from "../../src/protocols/ach/routing.ts";
import { writeAchFile, type AchEntryModel, type AchFieldValues, type AchFileModel } from "../../src/protocols/ach/writer.ts";
import { simBounds } from "./bounds.ts";
import type { Prng } from "./prng.ts";
import type { SimAchEntry, SimFile, World } from "./world.ts";

/**
 * ACH files of the simulation: originals, identical re-uploads and corrections. A correction keeps
 * the original's file header (so the service sees the same file identity with other content) and
 * changes amounts, adds entries and drops entries; traces of kept entries stay, so a changed
 * amount is the same natural key with another fingerprint: a conflict held for review.
 */
export const simOdfi = "23138010";
const companyIdentification = "1231380104";
/**
 * Effective entry dates an original file is drawn on (YYMMDD): weekdays, weekends and the Federal
 * Reserve's Thanksgiving (2026-11-26) and Christmas (2026-12-25), so settlement dates roll across
 * closed days (docs/decisions/0101). A correction keeps its original's date.
 */
const effectiveEntryDates: readonly string[] = Array.from({ length: 42 }, (_, i) => {
  const day = new Date(Date.UTC(2026, 10, 20 + i));
  return day.toISOString().slice(2, 10).replaceAll("-", "");
});

function fileHeaderOf(world: World, fileNumber: number): AchFieldValues {
  const minute = String(fileNumber % 60).padStart(2, "0");
  const hour = String(Math.floor(fileNumber / 60) % 24).padStart(2, "0");
  return {
    priorityCode: "01", immediateDestination: " 091000019", immediateOrigin: " 231380104", fileCreationDate: "261202",
    fileCreationTime: `${hour}${minute}`, fileIdModifier: "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[Math.floor(fileNumber / 1440) % 26] ?? "A",
    immediateDestinationName: "CLEARLINE BANK", immediateOriginName: `SIM ${world.seed}`.slice(0, 23),
  };
}

function entryModel(entry: SimAchEntry): AchEntryModel {
  return {
    fields: {
      transactionCode: entry.transactionCode, receivingDfiIdentification: entry.rdfi, checkDigit: routingCheckDigit(entry.rdfi),
      dfiAccountNumber: entry.account, amount: String(entry.amountMinor), individualIdentificationNumber: `SIM${entry.trace.slice(-9)}`,
      individualName: "SIM PAYEE", traceNumber: entry.trace,
    },
  };
}

function modelOf(header: AchFieldValues, entries: SimAchEntry[], effectiveEntryDate: string): AchFileModel {
  return {
    fileHeader: header,
    batches: [{
      header: {
        serviceClassCode: "200", companyName: "SIM PAYROLL", companyIdentification, standardEntryClassCode: "PPD",
        companyEntryDescription: "PAYROLL", companyDescriptiveDate: "DEC 02", effectiveEntryDate, originatorStatusCode: "1",
        originatingDfiIdentification: simOdfi, batchNumber: "1",
      },
      entries: [...entries].sort((a, b) => a.trace.localeCompare(b.trace)).map(entryModel),
    }],
  };
}

function written(model: AchFileModel): Buffer {
  const bytes = writeAchFile(model);
  assert(bytes.ok, `a simulated ACH file encodes: ${bytes.ok ? "" : bytes.error.message}`);
  return bytes.value;
}

/** A new entry: mostly credits to a customer known by alias, some debits, some to unknown accounts (suspense). */
function newEntry(world: World, rng: Prng): SimAchEntry {
  const trace = `${simOdfi}${String(++world.counters.trace).padStart(7, "0")}`;
  const known = rng.chance(0.75) && world.aliases.length > 0;
  const alias = known ? rng.pick(world.aliases) : undefined;
  return {
    trace,
    transactionCode: rng.chance(0.2) ? "27" : "22",
    rdfi: alias?.rdfi ?? "09100001",
    account: alias?.account ?? `UNKNOWN${rng.int(1, 999)}`,
    amountMinor: rng.int(1, simBounds.achAmountMaxMinor),
  };
}

export function originalFile(world: World, rng: Prng, idempotencyKey: string): SimFile {
  const fileNumber = ++world.counters.file;
  const entries = Array.from({ length: rng.int(1, simBounds.fileRecordsMax) }, () => newEntry(world, rng));
  const model = modelOf(fileHeaderOf(world, fileNumber), entries, rng.pick(effectiveEntryDates));
  return { name: `sim-${world.seed}-${fileNumber}.ach`, idempotencyKey, model, bytes: written(model), entries, told: "unknown" };
}

/** The same bytes under a new name (a re-upload by an operator who was not sure). */
export function reuploadOf(world: World, file: SimFile, idempotencyKey: string): SimFile {
  const fileNumber = ++world.counters.file;
  return { ...file, name: `sim-${world.seed}-${fileNumber}-copy.ach`, idempotencyKey, told: "unknown", fileId: undefined, reportedApplied: undefined };
}

/** The partner's corrected file: changed amounts, added and dropped entries, same header identity. */
export function correctionOf(world: World, rng: Prng, file: SimFile, idempotencyKey: string): SimFile {
  const fileNumber = ++world.counters.file;
  const entries: SimAchEntry[] = [];
  for (const entry of file.entries) {
    const fate = rng.weighted({ keep: 5, change: 3, drop: 2 });
    if (fate === "drop") continue;
    entries.push(fate === "change" ? { ...entry, amountMinor: entry.amountMinor + rng.int(1, 500) } : entry);
  }
  const added = rng.int(0, 3);
  for (let i = 0; i < added; i++) entries.push(newEntry(world, rng));
  if (entries.length === 0) entries.push(newEntry(world, rng));
  const originalDate = file.model.batches[0]?.header["effectiveEntryDate"];
  assert(originalDate !== undefined, "a simulated file has one batch with its effective date");
  const model = modelOf(file.model.fileHeader, entries, originalDate);
  return { name: `sim-${world.seed}-${fileNumber}-corrected.ach`, idempotencyKey, model, bytes: written(model), entries, correctionOf: file.name, told: "unknown" };
}
