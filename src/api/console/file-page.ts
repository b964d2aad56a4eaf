import type { FastifyInstance } from "fastify";
import { limits } from "../../config/limits.ts";
import type { Pool } from "../../db/pool.ts";
import { fileReport, type FileReport } from "../../files/report.ts";
import { minorToDecimal } from "../../protocols/iso4217/currency.ts";
import {
  fileRecordsPage, recordOutcomes, type FileRecordRow, type RecordOutcome,
} from "../../records/index.ts";
import { operatorOf } from "../operator-session.ts";
import { Html, html } from "./html.ts";
import { outcomePage, shell } from "./shell.ts";

interface FilePageQuery { outcome?: string; after?: string; limit?: string }

/** The page asked for: a cursor (the last record shown), an outcome, and at most the bound. */
function pageOf(query: FilePageQuery): {
  afterIndex: number; outcome: RecordOutcome | null; rowsMax: number;
} {
  const after = /^\d{1,9}$/.test(query.after ?? "") ? Number(query.after) : 0;
  const asked = /^\d{1,4}$/.test(query.limit ?? "") ? Number(query.limit) : Infinity;
  return {
    afterIndex: after,
    outcome: recordOutcomes.find((outcome) => outcome === query.outcome) ?? null,
    rowsMax: Math.max(1, Math.min(asked, limits.ingest.filePageRecordsMax)),
  };
}

const filesBack = { href: "/console/files", label: "the files" };
const fileHref = (fileId: string): string => `/console/files/${encodeURIComponent(fileId)}`;

function pageHref(fileId: string, query: Record<string, string | number | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== null && value !== "") search.set(name, String(value));
  }
  const text = search.toString();
  return `${fileHref(fileId)}${text ? `?${text}` : ""}`;
}

/** The original a record repeats or conflicts with: its file page and line, else its reference. */
function originalCell(row: FileRecordRow, names: ReadonlyMap<string, string>): Html {
  if (row.original_file_id !== null) {
    const name = names.get(row.original_file_id) ?? row.original_file_id;
    return html`<a class="original" href="${fileHref(row.original_file_id)}">${name}</a>,
      ${row.original_position ?? ""}`;
  }
  return html`${row.original_ref ?? ""}`;
}

function recordRow(row: FileRecordRow, names: ReadonlyMap<string, string>): Html {
  const amount = row.amount_minor !== null && row.currency !== null
    ? `${minorToDecimal(BigInt(row.amount_minor), row.currency)} ${row.currency}` : "";
  const history = row.natural_key === null ? html`` : html`<a class="history"
    href="/console/records?key=${encodeURIComponent(row.natural_key)}">history</a>`;
  const review = row.review_id === null ? html`` : html`<a class="review"
    href="/console/reviews?state=all&amp;review=${encodeURIComponent(row.review_id)}">review
    (${row.review_state ?? ""})</a>`;
  return html`<tr data-record="${row.index}" data-outcome="${row.outcome}">
    <td data-label="line">${row.position}</td>
    <td data-label="outcome">${row.outcome}${
      row.code ? html` <span class="note">${row.code}</span>` : ""}</td>
    <td data-label="natural key">${row.natural_key ?? ""}</td>
    <td data-label="amount" class="num">${amount}</td>
    <td data-label="original">${originalCell(row, names)}</td>
    <td data-label="see">${history} ${review}</td></tr>`;
}

function filterForm(fileId: string, outcome: RecordOutcome | null): Html {
  const options = ["", ...recordOutcomes].map((value) => html`<option value="${value}"${
    new Html(value === (outcome ?? "") ? " selected" : "")}>${value || "every outcome"}</option>`);
  return html`<form method="get" action="${fileHref(fileId)}" class="filter">
    <label>Outcome <select name="outcome">${options}</select></label>
    <button>Filter</button></form>`;
}

function summary(file: FileReport): Html {
  const counts = Object.entries(file.outcomes).filter(([, n]) => n > 0)
    .map(([outcome, n]) => `${outcome} ${n}`).join(", ");
  return html`<p id="file-summary">${file.partner} · ${file.source} · received ${file.received_at}
    · ${file.status} · ${file.records} records${counts ? `: ${counts}` : ""}</p>`;
}

/** Names of the other files a page's originals came from, read through the files' reports. */
async function originalFileNames(
  pool: Pool, tenantId: string, rows: readonly FileRecordRow[],
): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const id of new Set(rows.map((r) => r.original_file_id).filter((id) => id !== null))) {
    const report = await fileReport(pool, tenantId, id);
    if (report) names.set(id, report.name);
  }
  return names;
}

/**
 * A file's page: every record with its line, outcome, natural key, amount, the original it
 * repeats or conflicts with, and links to its history and review; filtered by outcome and paged
 * by a cursor on the record's place in the file (the next page starts after the last row shown).
 */
export function registerFilePage(pages: FastifyInstance, deps: { pool: Pool }): void {
  pages.get<{ Params: { id: string }; Querystring: FilePageQuery }>(
    "/console/files/:id",
    async (request, reply) => {
      const tenantId = operatorOf(request).tenantId;
      const fileId = request.params.id;
      const file = await fileReport(deps.pool, tenantId, fileId);
      if (!file) return outcomePage(request, reply, 404, `no file ${fileId}`, filesBack);
      const page = pageOf(request.query);
      const read = await fileRecordsPage(deps.pool, tenantId, fileId, {
        ...page, rowsMax: page.rowsMax + 1,
      });
      const rows = read.slice(0, page.rowsMax);
      const names = await originalFileNames(deps.pool, tenantId, rows);
      const last = rows.at(-1);
      const kept = { outcome: page.outcome, limit: request.query.limit ?? null };
      const next = read.length > page.rowsMax && last
        ? html`<a id="next-page"
            href="${pageHref(fileId, { ...kept, after: last.index })}">Next page</a>`
        : html``;
      const first = page.afterIndex > 0
        ? html`<a id="first-page" href="${pageHref(fileId, kept)}">First page</a>` : html``;
      return shell(request, reply, `File ${file.name}`, html`${summary(file)}
        ${filterForm(fileId, page.outcome)}
        <table id="file-records" class="stack"><tr><th>line</th><th>outcome</th>
          <th>natural key</th><th>amount</th><th>original</th><th>see</th></tr>
          ${rows.map((row) => recordRow(row, names))}</table>
        <p class="paging">${first} ${next}</p>`);
    },
  );
}
