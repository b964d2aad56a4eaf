import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Pool } from "../../db/pool.ts";
import { moveAsOperator } from "../../operators/four-eyes.ts";
import { suspenseMovesOf, type SuspenseMove } from "../../operators/suspense-move.ts";
import { addAccountAlias } from "../../partners/partners.ts";
import { minorToDecimal } from "../../protocols/iso4217/currency.ts";
import { listSuspensePostings } from "../../records/index.ts";
import type { Operator } from "../../operators/operators.ts";
import type { Reply } from "../../requests/reply.ts";
import { operatorOf } from "../operator-session.ts";
import {
  allowed, done, hiddenFields, messageOf, serviceRefusal, runForm, type Back, type FormTx,
} from "./form-parts.ts";
import { html, type Html } from "./html.ts";
import { form, outcomePage, shell } from "./shell.ts";

const back: Back = { href: "/console/suspense", label: "suspense" };
const deciders = ["approver", "admin"] as const;

/** The alias a suspense line's record named (its detail says which matched no account). */
export function aliasOfDetail(detail: string): string {
  return /^no account for (\S+): /.exec(detail)?.[1] ?? "";
}

function moveForms(request: FastifyRequest, postingKey: string, detail: string): Html {
  const posting = html`<input type="hidden" name="posting_key" value="${postingKey}">`;
  return html`<form class="inline move" method="post" action="/console/suspense/moves">
    ${hiddenFields(request)}${posting}<label>To account <input name="to_account" required></label>
    <label>Reason <input name="reason" required></label> <button>Move</button></form>
    <form class="alias" method="post" action="/console/suspense/aliases">
    ${hiddenFields(request)}${posting}<label>Alias
      <input name="alias" value="${aliasOfDetail(detail)}" required></label>
    <label>Its account <input name="alias_account" required></label>
    <label>Reason <input name="alias_reason" required></label>
    <button>Create alias and move</button></form>`;
}

function amountOf(p: { amount_minor: string; currency: string }): string {
  return `${minorToDecimal(BigInt(p.amount_minor), p.currency)} ${p.currency}`;
}

function movedText(move: SuspenseMove): string {
  return `moved to ${move.target_account} by ${move.decided_by} at ${move.decided_at}: ` +
    move.reason;
}

/**
 * Records posted to suspense (no alias matched) and moving them out (docs/decisions/0026): to an
 * account named, or by creating the alias the record named (the service `clearline alias add`
 * uses), so later records with it post straight to the account, and moving this one there. A
 * moved line stays listed with where it went.
 */
export function registerSuspensePages(pages: FastifyInstance, deps: { pool: Pool }): void {
  pages.get("/console/suspense", async (request, reply) => {
    const operator = operatorOf(request);
    const postings = await listSuspensePostings(deps.pool, { tenantId: operator.tenantId });
    const moves = await suspenseMovesOf(deps.pool, operator.tenantId,
      postings.map((p) => p.transfer_key));
    const rows = postings.map((p) => {
      const move = moves.get(p.transfer_key);
      const action = move ? html`<span class="moved-to">${movedText(move)}</span>`
        : operator.role === "viewer" ? html`` : moveForms(request, p.transfer_key, p.detail);
      return html`<tr data-posting="${p.transfer_key}" class="${move ? "moved" : ""}"
        data-moved-to="${move?.target_account ?? ""}"><td data-label="file">${p.file_id}</td>
        <td data-label="position">${p.position}</td>
        <td data-label="natural key" class="key">${p.natural_key}</td>
        <td class="num" data-label="amount">${amountOf(p)}</td>
        <td data-label="why">${p.detail}</td><td>${action}</td></tr>`;
    });
    return shell(request, reply, "Suspense", html`<p class="note">A move posts one transfer,
      &lt;posting key&gt;:suspense-move, from suspense to the account (docs/decisions/0026); above
      the four-eyes amount it waits for a second approver. Creating the alias the record named
      maps it to the account for every later record, and moves this one.</p>
      <table id="suspense" class="stack"><tr><th>file</th><th>position</th><th>natural key</th>
      <th>amount</th><th>why</th><th>move out</th></tr>${rows}</table>`);
  });
  registerMove(pages, deps);
  registerAliasMove(pages, deps);
}

async function moveReply(
  tx: FormTx, operator: Operator,
  request: { postingKey: string; targetAccount: string; reason: string },
  before = "",
): Promise<Reply> {
  const outcome = await moveAsOperator(tx, operator, request);
  if (!outcome.ok) return serviceRefusal(outcome.error);
  if (outcome.value.kind === "proposed") {
    return done(202, `${before}proposed ${outcome.value.proposal.proposal_id}: ` +
      "waits for a second approver; nothing posted");
  }
  const move = outcome.value.move;
  return done(200,
    `${before}moved to ${move.target_account} by ${move.decided_by}: ${move.move_key}`);
}

function registerMove(pages: FastifyInstance, deps: { pool: Pool }): void {
  pages.post("/console/suspense/moves", async (request, reply) => {
    const operator = allowed(request, reply, deciders, back);
    if (!operator) return reply;
    const fields = form(request);
    const postingKey = fields.posting_key ?? "";
    const targetAccount = fields.to_account?.trim() ?? "";
    const reason = fields.reason?.trim() ?? "";
    if (!postingKey || !targetAccount || !reason) {
      return outcomePage(request, reply, 400, "name the account and give a reason", back);
    }
    const answer = await runForm(deps.pool, request, "POST /v1/ops/suspense/moves",
      { posting_key: postingKey, to_account: targetAccount, reason },
      (tx) => moveReply(tx, operator, { postingKey, targetAccount, reason }));
    return outcomePage(request, reply, answer.status, messageOf(answer.body), back);
  });
}

/** The alias and the move in one transaction: both happen, or neither. */
function registerAliasMove(pages: FastifyInstance, deps: { pool: Pool }): void {
  pages.post("/console/suspense/aliases", async (request, reply) => {
    const operator = allowed(request, reply, deciders, back);
    if (!operator) return reply;
    const fields = form(request);
    const postingKey = fields.posting_key ?? "";
    const alias = fields.alias?.trim() ?? "";
    const targetAccount = fields.alias_account?.trim() ?? "";
    const reason = fields.alias_reason?.trim() ?? "";
    if (!postingKey || !alias || !targetAccount || !reason) {
      return outcomePage(request, reply, 400,
        "name the alias and its account, and give a reason", back);
    }
    const answer = await runForm(deps.pool, request, "POST /console/suspense/aliases",
      { posting_key: postingKey, alias, to_account: targetAccount, reason }, async (tx) => {
        const added = await addAccountAlias(tx, operator.tenantId, alias, targetAccount);
        if (!added.ok) return serviceRefusal(added.error);
        const moved = await moveReply(tx, operator, { postingKey, targetAccount, reason },
          `alias ${alias} -> ${targetAccount} ${added.value}; `);
        // A refused move takes the alias back with it: the effect's transaction rolls back.
        if (moved.status >= 300) throw new AliasMoveRefused(moved);
        return moved;
      }).catch((error: unknown) => {
      if (error instanceof AliasMoveRefused) return { ...error.reply, replayed: false };
      throw error;
    });
    return outcomePage(request, reply, answer.status, messageOf(answer.body), back);
  });
}

/** Thrown to roll the alias back when the move is refused; caught and shown as the refusal. */
class AliasMoveRefused extends Error {
  constructor(readonly reply: Reply) { super("the move was refused"); }
}
