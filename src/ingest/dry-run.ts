import { limits } from "../config/limits.ts";
import type { Queryable } from "../db/pool.ts";
import type { IngestRecord } from "../normalize/ingest-record.ts";
import type { FileFormat } from "../protocols/detect-format.ts";
import { fileRecords, scanFile, type ContentSource } from "./file-reader.ts";
import { positionOf, type ReportedFinding } from "./report.ts";

export type DryRunVerdict = "new" | "already_applied" | "changed" | "rejected";

export interface DryRunReport {
  name: string;
  format: string | null;
  status: "would_apply" | "would_reject";
  records: number;
  verdicts: Record<DryRunVerdict, number>;
  errors: ReportedFinding[];
  records_listed: Array<{ index: number; position: string; natural_key: string | null; verdict: DryRunVerdict; detail?: string }>;
}

/**
 * What ingesting a file would do, without storing or posting anything: each record is new,
 * already applied (its key is known with the same content), changed (its key is known with other
 * content: it would be a conflict), or rejected. A structurally broken file would be rejected whole.
 */
export async function dryRun(db: Queryable, tenantId: string, content: ContentSource, options: { name: string; format?: FileFormat }): Promise<DryRunReport> {
  const scan = await scanFile(content, { fileName: options.name, ...(options.format ? { format: options.format } : {}) });
  const report: DryRunReport = {
    name: options.name, format: scan.format ?? null, status: scan.rejected ? "would_reject" : "would_apply", records: scan.recordsTotal,
    verdicts: { new: 0, already_applied: 0, changed: 0, rejected: 0 },
    errors: scan.findings.filter((f) => f.severity === "error").map((f) => ({ ...(f.position.line !== undefined ? { line: f.position.line } : {}), ...(f.position.xmlPath !== undefined ? { xmlPath: f.position.xmlPath } : {}), ...(f.position.field !== undefined ? { field: f.position.field } : {}), code: f.code, message: f.message })),
    records_listed: [],
  };
  if (scan.rejected || !scan.format) return report;
  const seen = new Map<string, string>();   // key -> fingerprint, earlier in this file
  let chunk: IngestRecord[] = [];
  const classify = async () => {
    const keys = chunk.flatMap((r) => (r.record ? [r.record.naturalKey] : []));
    const { rows } = await db.query<{ natural_key: string; fingerprint: string }>(
      "SELECT natural_key, fingerprint FROM ingest_record_key WHERE tenant_id = $1 AND natural_key = ANY($2::text[])", [tenantId, keys]);
    const known = new Map(rows.map((r) => [r.natural_key, r.fingerprint]));
    for (const item of chunk) {
      let verdict: DryRunVerdict;
      let detail: string | undefined;
      if (!item.record) {
        verdict = "rejected";
        detail = item.rejection ? `${item.rejection.code}: ${item.rejection.message}` : undefined;
        if (item.rejection) report.errors.push({ ...positionOf(item.position), ...(item.rejection.position.field ? { field: item.rejection.position.field } : {}), code: item.rejection.code, message: item.rejection.message });
      } else {
        const fingerprint = known.get(item.record.naturalKey) ?? seen.get(item.record.naturalKey);
        verdict = fingerprint === undefined ? "new" : fingerprint === item.record.fingerprint ? "already_applied" : "changed";
        if (!seen.has(item.record.naturalKey) && seen.size < limits.ingest.showRecordsMax) seen.set(item.record.naturalKey, item.record.fingerprint);
      }
      report.verdicts[verdict]++;
      if (report.records_listed.length < limits.ingest.showRecordsMax) {
        report.records_listed.push({ index: item.index, position: item.position, natural_key: item.record?.naturalKey ?? null, verdict, ...(detail ? { detail } : {}) });
      }
    }
    chunk = [];
  };
  for await (const record of fileRecords(content, scan.format, { tenantId, fileId: "dry-run", fileName: options.name }).records) {
    chunk.push(record);
    if (chunk.length >= limits.ingest.chunkRecordsMax) await classify();
  }
  if (chunk.length > 0) await classify();
  return report;
}
