import type { FastifyInstance } from "fastify";
import type { Pool } from "../../db/pool.ts";
import {
  listPausedSources, pauseSource, resumeSource, type SourceName, type SourcePause,
} from "../../incidents/source-pause.ts";
import { findPartner, listPartners } from "../../partners/partners.ts";
import { operatorOf } from "../operator-session.ts";
import { allowed, done, hiddenFields, messageOf, runForm, type Back } from "./form-parts.ts";
import { html, type Html } from "./html.ts";
import { form, outcomePage, shell } from "./shell.ts";

const back: Back = { href: "/console/sources", label: "the sources" };
const deciders = ["approver", "admin"] as const;

/**
 * The tenant's sources (issue 33): each partner's drop folders and SFTP pollers, and the ISO 8583
 * endpoint, with who paused which and why; pause and resume by the same service calls as
 * `clearline source pause|resume` (src/incidents/source-pause.ts). A viewer sees, never acts.
 */
export function registerSourcePages(pages: FastifyInstance, deps: { pool: Pool }): void {
  pages.get("/console/sources", async (request, reply) => {
    const operator = operatorOf(request);
    const paused = new Map((await listPausedSources(deps.pool, operator.tenantId))
      .map((p) => [p.source, p]));
    const partners = await listPartners(deps.pool, operator.tenantId);
    const sources: Array<{ source: SourceName; label: string }> = [
      ...partners.map((p) => ({
        source: `partner:${p.partnerId}` as const, label: `partner ${p.name}`,
      })),
      { source: "iso8583", label: "ISO 8583 endpoint" },
    ];
    const canAct = operator.role !== "viewer";
    const rows = sources.map(({ source, label }) => {
      const pause = paused.get(source);
      return html`<tr data-source="${source}" data-state="${pause ? "paused" : "taking"}">
        <td data-label="source">${label}</td><td data-label="state">${stateText(pause)}</td>
        <td>${canAct ? actionForm(request, source, label, pause) : html``}</td></tr>`;
    });
    return shell(request, reply, "Sources", html`<p class="note">A paused partner's drop
      folders and SFTP pollers take no new file; a paused ISO 8583 endpoint answers the tenant's
      financial messages 91 (issuer inoperative). Work already taken finishes.</p>
      <table id="sources" class="stack"><tr><th>source</th><th>state</th><th></th></tr>${rows}
      </table>`);
  });
  for (const verb of ["pause", "resume"] as const) registerSourceAction(pages, deps, verb);
}

function stateText(pause: SourcePause | undefined): string {
  return pause
    ? `paused by ${pause.pausedBy} at ${pause.pausedAt}: ${pause.reason}`
    : "taking new work";
}

function actionForm(
  request: Parameters<typeof hiddenFields>[0], source: string, label: string,
  pause: SourcePause | undefined,
): Html {
  const fields = html`${hiddenFields(request)}<input type="hidden" name="source"
    value="${source}">`;
  if (pause) {
    return html`<form class="inline resume" method="post" action="/console/sources/resume">
      ${fields}<button aria-label="Resume ${label}">Resume</button></form>`;
  }
  return html`<form class="inline pause" method="post" action="/console/sources/pause">${fields}
    <label>Why pause ${label} <input name="reason" required></label>
    <button>Pause</button></form>`;
}

function registerSourceAction(
  pages: FastifyInstance, deps: { pool: Pool }, verb: "pause" | "resume",
): void {
  pages.post(`/console/sources/${verb}`, async (request, reply) => {
    const operator = allowed(request, reply, deciders, back);
    if (!operator) return reply;
    const fields = form(request);
    const text = fields.source ?? "";
    const reason = fields.reason?.trim() ?? "";
    const partner = text.startsWith("partner:")
      ? await findPartner(deps.pool, operator.tenantId, text.slice("partner:".length))
      : undefined;
    const source: SourceName | undefined =
      text === "iso8583" ? "iso8583" : partner ? `partner:${partner.partnerId}` : undefined;
    if (!source) return outcomePage(request, reply, 404, `no source ${text}`, back);
    if (verb === "pause" && reason === "") {
      return outcomePage(request, reply, 400, "give a reason; nothing was paused", back);
    }
    const answer = await runForm(deps.pool, request, `POST /console/sources/${verb}`,
      { source, reason }, async (tx) => {
        if (verb === "resume") {
          const was = await resumeSource(tx, operator.tenantId, source);
          return done(200, `${source} ${was ? "resumed" : "was not paused"} by ${operator.name}`);
        }
        const paused = await pauseSource(tx, operator.tenantId, source, operator.name, reason);
        return done(200,
          `${source} paused by ${paused.pausedBy} at ${paused.pausedAt}: ${paused.reason}`);
      });
    return outcomePage(request, reply, answer.status, messageOf(answer.body), back);
  });
}
