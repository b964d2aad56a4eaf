import { randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { limits } from "../../config/limits.ts";
import type { Pool } from "../../db/pool.ts";
import { listIncidents } from "../../incidents/list-incidents.ts";
import { showIncident } from "../../incidents/perimeter.ts";
import { countByReason, decideDifferenceAsOperator } from "../../operators/difference-decision.ts";
import {
  findOutbox, listOutbox, oldestUndeliveredAgeSeconds, retryDead,
} from "../../outbox/outbox-store.ts";
import { minorToDecimal } from "../../protocols/iso4217/currency.ts";
import { listOpenDifferences, type Difference } from "../../recon/differences.ts";
import {
  differenceSides, theirLineOf, type DifferenceSides,
} from "../../recon/difference-sides.ts";
import { runIdempotent } from "../../requests/idempotent-request.ts";
import { operatorOf } from "../operator-session.ts";
import { jsonReply, problemReply } from "../../requests/reply.ts";
import { refreshReconMetrics } from "../../recon/recon-metrics.ts";
import { listProposals } from "../../operators/four-eyes.ts";
import { proposalForms } from "./proposal-forms.ts";
import { OUTBOX_LAG_SCALE_SECONDS, outboxLagChart } from "./charts.ts";
import { html, type Html } from "./html.ts";
import { form, outcomePage, refusedPage, shell } from "./shell.ts";

const hidden = (csrf: string): Html => html`<input type="hidden" name="csrf_token" value="${csrf}"><input type="hidden" name="idempotency_key" value="${randomUUID()}">`;
const messageOf = (body: string): string => {
  const parsed = JSON.parse(body) as { message?: string; detail?: string };
  return parsed.message ?? parsed.detail ?? "";
};

/**
 * Reconciliation differences, outbox dead letters and incidents in the console
 * (docs/decisions/0031), over the same functions and idempotency endpoints as /v1/ops: a form's key
 * is the API's key.
 */
export function registerRecoveryPages(pages: FastifyInstance, deps: { pool: Pool }): void {
  registerDifferencePages(pages, deps);
  registerDifferenceDecision(pages, deps);
  registerOutboxPages(pages, deps);
  registerIncidentPages(pages, deps);
}

function registerDifferencePages(pages: FastifyInstance, deps: { pool: Pool }): void {
  pages.get("/console/differences", async (request, reply) => {
    const operator = operatorOf(request);
    const csrf = request.operatorSession?.csrfToken ?? "";
    const differences = await listOpenDifferences(
      deps.pool, operator.tenantId, undefined, limits.ingest.listRowsMax,
    );
    const proposed = new Map(
      (await listProposals(deps.pool, operator.tenantId, limits.ingest.listRowsMax))
        .filter((p) => p.subject_kind === "recon_difference" && p.state === "open")
        .map((p) => [p.subject_id, p]),
    );
    const sides = await differenceSides(deps.pool, operator.tenantId, differences);
    const decideForm = (id: string) => operator.role === "viewer"
      ? html`<span class="note">viewers cannot decide</span>`
      : differenceForm(id, csrf);
    const rows = differences.map((d) => {
      const proposal = proposed.get(d.differenceId);
      const decide = proposal ? html`<span class="proposal" data-proposal="${proposal.proposal_id}">correction proposed by ${proposal.proposed_by} (${proposal.proposed_via}): ${proposal.reason}; waits for a second approver</span> ${proposalForms(operator, csrf, proposal, "differences")}` : decideForm(d.differenceId);
      return html`<tr data-difference="${d.differenceId}" data-reason="${d.reason}">
      <td data-label="reason">${d.reason}</td><td data-label="first seen">${d.firstSeenAt}</td>
      <td data-label="account">${d.accountId}</td>
      <td class="num" data-label="delta">${minorToDecimal(d.deltaMinor, d.currency)} ${d.currency}</td>
      <td data-label="their lines">${theirCell(sides, d)}</td>
      <td data-label="our transfers">${ourCell(sides, d)}</td><td>${decide}</td></tr>`;
    });
    return shell(request, reply, "Reconciliation differences", html`<p class="note">Open differences, theirs_only first, then the oldest first. Correct posts transfer recon:&lt;difference&gt; between the account and recon suspense by the delta (theirs minus ours); explain closes it with the reason and moves no money. Above the four-eyes amount a correction is proposed: another approver approves it (then it posts, once) or anyone who may decide cancels it (nothing moves).</p>
      <p>By reason: <span id="by-reason">${Object.entries(countByReason(differences)).map(([reason, n]) => `${reason} ${n}`).join(", ") || "none open"}</span></p>
      <table id="differences" class="stack"><tr><th>reason</th><th>first seen</th><th>account</th><th>delta</th><th>their lines</th><th>our transfers</th><th>decide</th></tr>${rows}</table>`);
  });
}

const decimal = (amountMinor: bigint, currency: string): string =>
  `${minorToDecimal(amountMinor, currency)} ${currency}`;

/** Their side of a difference: each bank line's own dates, amount, references and text. */
function theirCell(sides: DifferenceSides, d: Difference): Html[] {
  return d.itemKeys.map((key) => {
    const line = theirLineOf(sides, d.accountId, key);
    if (!line) return html`<div class="bank-line key">${key}</div>`;
    const sign = line.direction === "D" ? "-" : "";
    return html`<div class="bank-line" data-item="${key}"><span class="key">${key}</span>:
      booked <span class="booking-date">${line.bookingDate}</span>${line.valueDate
        ? `, value ${line.valueDate}` : ""},
      <span class="num">${sign}${decimal(line.amountMinor, line.currency)}</span>,
      ref <span class="refs">${line.refs.join(" ") || "none"}</span>,
      text <span class="text">${line.description ?? ""}</span></div>`;
  });
}

/** Our side: each transfer's kind, value date and legs on the account. */
function ourCell(sides: DifferenceSides, d: Difference): Html[] {
  return d.transferKeys.map((key) => {
    const transfer = sides.ours.get(key);
    if (!transfer) return html`<div class="our-line key">${key}</div>`;
    const legs = transfer.legs.filter((l) => l.accountId === d.accountId)
      .map((l) => `${l.direction === "D" ? "debit" : "credit"} ` +
        `${minorToDecimal(l.amountMinor, l.currency)} ${l.currency}`);
    return html`<div class="our-line" data-transfer="${key}"><span class="key">${key}</span>:
      ${transfer.kind}, value ${transfer.valueDate}, ${legs.join(", ")}</div>`;
  });
}

/** A difference's decision: no correction is preselected; the verb and a reason are required. */
function differenceForm(differenceId: string, csrf: string): Html {
  const choice = (value: string, label: string) => html`<label class="choice"><input type="radio"
    name="verb" value="${value}" required> ${label}</label>`;
  return html`<form class="decide" method="post"
    action="/console/differences/${differenceId}/decision">${hidden(csrf)}
    <fieldset><legend>Decision (choose one)</legend>${choice("correct", "correct (post it)")}
      ${choice("explain", "explain (no money)")}</fieldset>
    <label class="reason">Reason <input name="reason" required></label> <button>Decide</button>
  </form>`;
}

function registerDifferenceDecision(pages: FastifyInstance, deps: { pool: Pool }): void {
  const back = { href: "/console/differences", label: "the differences" };
  pages.post<{ Params: { id: string } }>(
    "/console/differences/:id/decision",
    async (request, reply) => {
      const operator = operatorOf(request);
      const fields = form(request);
      const verb = fields.verb === "correct" || fields.verb === "explain" ? fields.verb : undefined;
      const reason = fields.reason?.trim() ?? "";
      if (operator.role === "viewer") {
        return outcomePage(request, reply, 403, "a viewer cannot decide", back);
      }
      if (!verb) {
        return refusedPage(request, reply, "RECON_DIFFERENCE_DECISION_MISSING",
          "choose correct or explain; nothing was decided", back);
      }
      if (!reason) {
        return outcomePage(request, reply, 400, "give a reason; nothing was decided", back);
      }
      const differenceId = request.params.id;
      const answer = await runIdempotent({
        pool: deps.pool,
        tenantId: operator.tenantId,
        endpoint: `POST /v1/ops/differences/{id}/${verb}`,
        idempotencyKeyHeader: fields.idempotency_key,
        canonical: { difference_id: differenceId, reason, operator_id: operator.operatorId },
        effect: async (tx) => {
          const decided = await decideDifferenceAsOperator(tx, operator, {
            differenceId, verb, reason, today: new Date().toISOString().slice(0, 10),
          });
          if (!decided.ok) {
            return problemReply(
              "REQUEST_INVALID", `${decided.error.code}: ${decided.error.message}`,
            );
          }
          if (decided.value.kind === "proposed") {
            return jsonReply(
              202,
              {
                message: `proposed ${decided.value.proposal.proposal_id}: the correction waits for a second approver; nothing posted`,
              },
              decided.value.proposal.proposal_id,
            );
          }
          const d = decided.value.difference;
          return jsonReply(
            200,
            {
              message: `${d.state} by ${d.decidedBy ?? operator.name}: ${d.correctionKey ?? "no money moved"}`,
            },
            d.correctionKey ?? differenceId,
          );
        },
      });
      if (!answer.replayed && answer.status === 200) {
        await refreshReconMetrics(deps.pool, operator.tenantId);
      }
      return outcomePage(request, reply, answer.status, messageOf(answer.body), back);
    },
  );
}

function registerOutboxPages(pages: FastifyInstance, deps: { pool: Pool }): void {
  const back = { href: "/console/outbox", label: "the outbox" };
  pages.get("/console/outbox", async (request, reply) => {
    const operator = operatorOf(request);
    const csrf = request.operatorSession?.csrfToken ?? "";
    const dead = await listOutbox(
      deps.pool, operator.tenantId, { state: "dead" }, limits.outbox.listRowsMax,
    );
    const retryForm = (id: string) => operator.role === "viewer" ? html`` : html`<form class="inline retry" method="post" action="/console/outbox/${id}/retry">${hidden(csrf)}<button>Retry</button></form>`;
    const rows = dead.map((m) => html`<tr data-outbox="${m.id}"><td>${m.id}</td><td>${m.createdAt}</td><td>${m.destination}</td><td>${m.messageType}</td><td>${m.messageKey}</td><td class="num">${m.attempts}</td><td>${m.lastError ?? ""}</td><td>${retryForm(m.id)}</td></tr>`);
    return shell(request, reply, "Outbox dead letters", html`${outboxLagChart(await oldestUndeliveredAgeSeconds(deps.pool), OUTBOX_LAG_SCALE_SECONDS)}
      <p class="note">Messages the relay gave up on after every attempt. A retry makes one due now with a fresh attempt budget; the receiver deduplicates by the message key.</p>
      <table id="dead-letters"><tr><th>id</th><th>written</th><th>destination</th><th>type</th><th>key</th><th>attempts</th><th>last error</th><th></th></tr>${rows}</table>`);
  });

  pages.post<{ Params: { id: string } }>("/console/outbox/:id/retry", async (request, reply) => {
    const operator = operatorOf(request);
    if (operator.role === "viewer") {
      return outcomePage(request, reply, 403, "a viewer cannot retry", back);
    }
    const id = request.params.id;
    if (!/^\d{1,18}$/.test(id)) return outcomePage(request, reply, 404, `no outbox message ${id}`, back);
    const answer = await runIdempotent({
      pool: deps.pool,
      tenantId: operator.tenantId,
      endpoint: "POST /v1/ops/outbox/{id}/retry",
      idempotencyKeyHeader: form(request).idempotency_key,
      canonical: { outbox_id: id, operator_id: operator.operatorId },
      effect: async (tx) => {
        if (await retryDead(tx, operator.tenantId, id)) {
          return jsonReply(
            200, { message: `message ${id} is due again (retried by ${operator.name})` }, id,
          );
        }
        const found = await findOutbox(tx, operator.tenantId, id);
        return found
          ? problemReply("OUTBOX_MESSAGE_NOT_DEAD", `outbox message ${id} is ${found.state}`)
          : problemReply("OUTBOX_MESSAGE_UNKNOWN", `no outbox message ${id}`);
      },
    });
    return outcomePage(request, reply, answer.status, messageOf(answer.body), back);
  });
}

function registerIncidentPages(pages: FastifyInstance, deps: { pool: Pool }): void {
  pages.get("/console/incidents", async (request, reply) => {
    const incidents = await listIncidents(
      deps.pool, operatorOf(request).tenantId, limits.ingest.listRowsMax,
    );
    const rows = incidents.map((i) => html`<tr data-incident="${i.incidentId}"><td><a href="/console/incidents/${encodeURIComponent(i.incidentId)}">${i.title}</a></td><td>${i.openedAt}</td><td>${i.openedBy}</td>
      <td class="num">${i.records}</td><td>${Object.entries(i.totals).map(([currency, minor]) => `${minorToDecimal(BigInt(minor), currency)} ${currency}`).join(", ")}</td><td class="num">${i.compensations}</td></tr>`);
    return shell(request, reply, "Incidents", html`<table id="incidents"><tr><th>title</th><th>opened</th><th>by</th><th>records</th><th>totals</th><th>compensations</th></tr>${rows}</table>`);
  });

  pages.get<{ Params: { id: string } }>("/console/incidents/:id", async (request, reply) => {
    const incident = await showIncident(deps.pool, operatorOf(request).tenantId, request.params.id);
    if (!incident) return outcomePage(request, reply, 404, `no incident ${request.params.id}`, { href: "/console/incidents", label: "the incidents" });
    const records = incident.records.map((r) => html`<tr><td>${r.occurredAt}</td><td>${r.channel}</td><td>${r.naturalKey}</td><td>${r.sourceRef ?? ""}</td><td>${r.transferKey ?? ""}</td>
      <td class="num">${minorToDecimal(r.amountMinor, r.currency)} ${r.currency}</td><td>${r.compensated ? "compensated" : ""}</td></tr>`);
    const compensations = incident.compensations.map((c) => html`<tr><td>${c.decidedAt}</td><td>${c.transferKey}</td><td>${c.compensationKey}</td><td>${c.outcome}</td><td>${c.decidedBy}</td><td>${c.reason}</td><td>${c.detail ?? ""}</td></tr>`);
    return shell(request, reply, `Incident: ${incident.title}`, html`<p>Opened by ${incident.openedBy} at ${incident.openedAt}; window ${incident.criteria.since} to ${incident.criteria.until}${incident.criteria.channel ? `, channel ${incident.criteria.channel}` : ""}.</p>
      <h2>Perimeter</h2><table id="incident-records"><tr><th>time</th><th>channel</th><th>natural key</th><th>source</th><th>transfer</th><th>amount</th><th></th></tr>${records}</table>
      <h2>Compensations</h2><table id="incident-compensations"><tr><th>decided</th><th>transfer</th><th>compensation</th><th>outcome</th><th>by</th><th>reason</th><th>detail</th></tr>${compensations}</table>`);
  });
}
