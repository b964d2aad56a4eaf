import type { FastifyInstance } from "fastify";
import type { Pool } from "../../db/pool.ts";
import { recordHistory, type HistoryEvent } from "../../records/index.ts";
import { operatorOf } from "../operator-session.ts";
import { html, type Html } from "./html.ts";
import { shell } from "./shell.ts";

function eventRow(event: HistoryEvent): Html {
  if (event.type === "held") return html`<tr class="held"><td>${event.at}</td><td>held</td><td>${event.natural_key}</td><td>review ${event.review_id}</td><td>${event.reason}, ${event.state}</td><td></td></tr>`;
  if (event.type === "decision") {
    return html`<tr class="decision"><td>${event.at}</td><td>decided</td><td>${event.natural_key}</td><td>review ${event.review_id}: ${event.decision} by ${event.operator}</td><td>${event.reason}</td>
      <td>${[event.compensation_key, event.posting_key].filter(Boolean).join(", ")}</td></tr>`;
  }
  return html`<tr class="arrival" data-channel="${event.channel}" data-outcome="${event.outcome}"><td>${event.at}</td><td>${event.channel}</td><td>${event.natural_key}</td><td>${event.via}</td>
    <td>${event.outcome}${event.code ? ` ${event.code}` : ""}${event.detail ? `: ${event.detail}` : ""}</td><td>${event.transfer_key ?? event.original_ref ?? ""}</td></tr>`;
}

/**
 * A record's history across channels (docs/decisions/0032): look a natural key (or a payment
 * identity, e2e:<reference>) up, and see every arrival through any channel, the decision on each,
 * the review decisions and the transfers, oldest first. The same document as GET
 * /v1/ops/records/{key}.
 */
export function registerRecordPages(pages: FastifyInstance, deps: { pool: Pool }): void {
  pages.get<{ Querystring: { key?: string } }>("/console/records", async (request, reply) => {
    const key = (request.query.key ?? "").trim();
    const search = html`<form method="get" action="/console/records"><input name="key" value="${key}" size="80" placeholder="natural key, or e2e:<end-to-end reference>"> <button id="look-up">Look up</button></form>`;
    if (key === "") return shell(request, reply, "Record history", search);
    const history = await recordHistory(deps.pool, operatorOf(request).tenantId, key);
    if (!history) return shell(request, reply, "Record history", html`${search}<p id="outcome" class="error">No record ${key}.</p>`);
    const records = history.records.map((r) => html`<tr><td>${r.natural_key}</td><td>${r.channel} ${r.kind}</td><td class="num">${r.amount} ${r.currency}</td><td>${r.state}</td><td>${r.transfer_key ?? ""}</td><td>${r.linked_to ?? ""}</td></tr>`);
    const transfers = history.transfers.map((t) => html`<tr data-transfer="${t.transfer_key}"><td>${t.transfer_key}</td><td>${t.kind}</td><td>${t.value_date}</td><td>${t.legs.map((l) => `${l.side} ${l.account} ${l.amount} ${l.currency}`).join(", ")}</td></tr>`);
    return shell(request, reply, "Record history", html`${search}
      <p>${history.key}${history.identity_key ? ` — payment identity ${history.identity_key}` : ""}</p>
      <h2>Records</h2><table id="records"><tr><th>natural key</th><th>channel, kind</th><th>amount</th><th>state</th><th>transfer</th><th>linked to</th></tr>${records}</table>
      <h2>Arrivals and decisions</h2><table id="events"><tr><th>when</th><th>how</th><th>key</th><th>via</th><th>decision</th><th>effect</th></tr>${history.events.map(eventRow)}</table>
      <h2>Transfers</h2><table id="transfers"><tr><th>transfer</th><th>kind</th><th>value date</th><th>legs</th></tr>${transfers}</table>`);
  });
}
