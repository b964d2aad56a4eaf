import { randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { limits } from "../../config/limits.ts";
import type { Pool } from "../../db/pool.ts";
import { listProposals, type Proposal } from "../../operators/four-eyes.ts";
import type { Operator } from "../../operators/operators.ts";
import { minorToDecimal } from "../../protocols/iso4217/currency.ts";
import { reviewQueue, type ReviewQueueItem } from "../../records/index.ts";
import { operatorOf } from "../operator-session.ts";
import { Html, html } from "./html.ts";
import { proposalForms } from "./proposal-forms.ts";
import { shell } from "./shell.ts";

/** What the queue shows: open items (the default), decided ones, or all. */
export const reviewFilters = ["open", "decided", "all"] as const;
type ReviewFilter = (typeof reviewFilters)[number];
const filterOf = (value: string | undefined): ReviewFilter =>
  reviewFilters.find((filter) => filter === value) ?? "open";

const amountOf = (minor: string, currency: string): string =>
  `${minorToDecimal(BigInt(minor), currency)} ${currency}`;
const placeOf = (fileName: string | null, fileId: string, position: string | null): string =>
  `${fileName ?? fileId}${position ? `, ${position}` : ""}`;

/** How long ago, in the two largest units: "2 d 3 h", "5 h 12 min", "3 min". */
export function ageOf(sinceIso: string, nowMs: number): string {
  const minutes = Math.max(0, Math.floor((nowMs - Date.parse(sinceIso)) / 60_000));
  const days = Math.floor(minutes / 1_440);
  const hours = Math.floor((minutes % 1_440) / 60);
  if (days > 0) return `${days} d ${hours} h`;
  if (hours > 0) return `${hours} h ${minutes % 60} min`;
  return `${minutes} min`;
}

/**
 * The held record beside what it was held against, field by field: a field whose values differ
 * is marked (`tr.differs`, its values in <mark>); where each arrived is shown, never marked.
 */
function sideBySide(item: ReviewQueueItem): Html {
  const standing = item.standing;
  const field = (name: string, was: string | undefined, held: string): Html => {
    const differs = was !== undefined && was !== held;
    const value = (text: string | undefined) => (differs ? html`<mark>${text}</mark>` : text ?? "");
    return html`<tr class="${differs ? "differs" : ""}" data-field="${name}">
      <th scope="row">${name}</th>
      <td class="was">${value(was)}</td><td class="held">${value(held)}</td></tr>`;
  };
  const where = html`<tr data-field="arrived in"><th scope="row">arrived in</th>
    <td class="was">${
      standing ? placeOf(standing.file_name, standing.file_id, standing.position) : "—"}</td>
    <td class="held">${placeOf(item.held_file_name, item.file_id, item.position)}</td></tr>`;
  return html`<table class="side-by-side"><tr><th>field</th><th>original (as the key stands)</th>
    <th>held</th></tr>${where}
    ${field("natural key", standing?.natural_key, item.natural_key)}
    ${field("kind", standing?.kind, item.kind)}
    ${field("amount", standing ? amountOf(standing.amount_minor, standing.currency) : undefined,
      amountOf(item.amount_minor, item.currency))}
    ${field("value date", standing?.value_date, item.value_date)}</table>`;
}

/** The form that decides one item: no decision is preselected, and both fields are required. */
function decideForm(reviewId: string, csrf: string): Html {
  const choice = (value: string, label: string) => html`<label class="choice"><input type="radio"
    name="decision" value="${value}" required> ${label}</label>`;
  return html`<form class="decide" method="post" action="/console/reviews/${reviewId}/decision">
    <input type="hidden" name="csrf_token" value="${csrf}">
    <input type="hidden" name="idempotency_key" value="${randomUUID()}">
    <fieldset><legend>Decision (choose one)</legend>${choice("replace", "replace the original")}
      ${choice("apply_as_new", "apply as a new payment")}
      ${choice("refuse", "refuse (post nothing)")}
    </fieldset>
    <label class="reason">Reason <input name="reason" required></label> <button>Decide</button>
  </form>`;
}

/** An open item's way forward: waiting for a second approver, a viewer's note, or the form. */
function decisionPart(
  item: ReviewQueueItem, operator: Operator, csrf: string, proposal: Proposal | undefined,
): Html {
  if (item.state !== "open") {
    return html`<p class="decided">${item.state} by ${item.operator ?? ""}:
      ${item.decision_reason ?? ""}</p>`;
  }
  if (proposal) {
    return html`<p class="waiting" data-proposal="${proposal.proposal_id}">waiting for second
      approver: ${proposal.decision} proposed by ${proposal.proposed_by}
      (${proposal.proposed_via}): ${proposal.reason}</p>`;
  }
  if (operator.role === "viewer") return html`<p class="note">viewers cannot decide</p>`;
  return decideForm(item.review_id, csrf);
}

function itemPart(
  item: ReviewQueueItem, operator: Operator, csrf: string, proposal: Proposal | undefined,
  nowMs: number,
): Html {
  const waiting = proposal ? "waiting" : item.state;
  return html`<article class="review" id="${item.review_id}" data-review="${item.review_id}"
    data-state="${waiting}"><h3>${item.reason} ${item.review_id}</h3>
    <p class="meta">held <span class="age">${ageOf(item.created_at, nowMs)}</span> ago
      (${item.created_at}); ${item.state}${item.detail ? `; ${item.detail}` : ""}</p>
    ${sideBySide(item)}${decisionPart(item, operator, csrf, proposal)}</article>`;
}

/** The items grouped by natural key, groups in the order of their oldest item. */
function groupsOf(items: readonly ReviewQueueItem[]): Map<string, ReviewQueueItem[]> {
  const groups = new Map<string, ReviewQueueItem[]>();
  for (const item of items) {
    groups.set(item.natural_key, [...(groups.get(item.natural_key) ?? []), item]);
  }
  return groups;
}

function filterForm(filter: ReviewFilter): Html {
  const options = reviewFilters.map((f) =>
    html`<option value="${f}"${new Html(f === filter ? " selected" : "")}>${f}</option>`);
  return html`<form method="get" action="/console/reviews" class="filter">
    <label>Show <select name="state">${options}</select></label> <button>Filter</button></form>`;
}

/** The review queue: items grouped by key, each held record beside its original; proposals. */
export function registerReviewQueuePage(pages: FastifyInstance, deps: { pool: Pool }): void {
  pages.get<{ Querystring: { state?: string; review?: string } }>(
    "/console/reviews",
    async (request, reply) => {
      const operator = operatorOf(request);
      const csrf = request.operatorSession?.csrfToken ?? "";
      const filter = filterOf(request.query.state);
      const reviewId = request.query.review?.trim() || undefined;
      const items = await reviewQueue(deps.pool, operator.tenantId, {
        state: filter, ...(reviewId ? { reviewId } : {}),
      });
      const proposals = await listProposals(
        deps.pool, operator.tenantId, limits.ingest.listRowsMax,
      );
      const pending = new Map(proposals
        .filter((p) => p.subject_kind === "review" && p.state === "open")
        .map((p) => [p.subject_id, p]));
      const nowMs = Date.now();
      const groups = [...groupsOf(items)].map(([key, group]) => html`<section class="key-group"
        data-key="${key}"><h2>${key}
        <a href="/console/records?key=${encodeURIComponent(key)}">history</a>
        <span class="note">${group.length} ${group.length === 1 ? "arrival" : "arrivals"}
        held</span></h2>
        ${group.map((item) => itemPart(item, operator, csrf, pending.get(item.review_id), nowMs))}
        </section>`);
      const shown = reviewId
        ? html`<p>Item ${reviewId} only. <a href="/console/reviews">All open</a></p>` : html``;
      return shell(request, reply, "Review queue", html`${filterForm(filter)}${shown}
        <div id="reviews">${groups.length ? groups : html`<p class="note">No items.</p>`}</div>
        ${proposalsPart(operator, csrf, proposals)}`);
    },
  );
}

function proposalsPart(operator: Operator, csrf: string, proposals: readonly Proposal[]): Html {
  const rows = proposals.map((p) => html`<tr data-proposal="${p.proposal_id}"
    data-state="${p.state}">
    <td data-label="proposal">${p.proposal_id}</td>
    <td data-label="subject">${p.subject_kind} ${p.subject_id}</td>
    <td data-label="decision">${p.decision}${p.target_account ? ` to ${p.target_account}` : ""}:
      ${p.reason}</td>
    <td data-label="amount" class="num">${amountOf(p.amount_minor, p.currency)}</td>
    <td data-label="proposed by">${p.proposed_by} (${p.proposed_via})</td>
    <td data-label="state">${p.state}${p.approved_by ? ` by ${p.approved_by}` : ""}${
      p.cancelled_by ? ` by ${p.cancelled_by}: ${p.cancel_reason ?? ""}` : ""}</td>
    <td>${proposalForms(operator, csrf, p, "reviews")}</td></tr>`);
  return html`<h2>Waiting for a second approver</h2><table id="proposals" class="stack"><tr>
    <th>proposal</th><th>subject</th><th>decision: reason</th><th>amount</th>
    <th>proposed by (path)</th><th>state</th><th></th></tr>${rows}</table>`;
}
