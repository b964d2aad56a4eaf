import type { FastifyReply, FastifyRequest } from "fastify";
import type { ErrorCode } from "../../errors/catalog.ts";
import { httpStatusOf } from "../../errors/problem.ts";
import { html, page, type Html } from "./html.ts";

/** The console's page plumbing: the HTML reply with its CSP, a form's fields, the signed-in frame and the outcome page. */
export function render(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).header("content-type", "text/html; charset=utf-8").header("content-security-policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'").send(body);
}

export const form = (request: FastifyRequest): Record<string, string> => (request.body ?? {}) as Record<string, string>;

export function shell(request: FastifyRequest, reply: FastifyReply, title: string, body: Html, script?: string): FastifyReply {
  const session = request.operatorSession;
  const text = page(title, body, {
    operator: `${session?.operator.name ?? ""} (${session?.operator.role ?? ""})`,
    admin: session?.operator.role === "admin", ...(script ? { script } : {}),
  })
    .replace("<body>", `<body data-csrf="${session?.csrfToken ?? ""}">`);
  return render(reply, 200, text);
}

/** The answer to a form: what was done or refused, and a way back (the review queue unless `back` says otherwise). */
export function outcomePage(request: FastifyRequest, reply: FastifyReply, status: number, message: string, back = { href: "/console/reviews", label: "the review queue" }): FastifyReply {
  const text = page(status < 300 ? "Done" : "Refused", html`<p id="outcome" class="${status < 300 ? "" : "error"}">${message}</p><p><a href="${back.href}">Back to ${back.label}</a></p>`,
    { operator: request.operatorSession?.operator.name ?? "" });
  return render(reply, status, text);
}

/**
 * A form refused before anything ran: the status of the catalog code, and the code itself on the
 * page (`data-code`, lower case as in problem details) so a person and a test can tell why.
 */
export function refusedPage(
  request: FastifyRequest, reply: FastifyReply, code: ErrorCode, detail: string,
  back = { href: "/console/reviews", label: "the review queue" },
): FastifyReply {
  const body = html`<p id="outcome" class="error" data-code="${code.toLowerCase()}">${code}:
    ${detail}</p><p><a href="${back.href}">Back to ${back.label}</a></p>`;
  const text = page("Refused", body, { operator: request.operatorSession?.operator.name ?? "" });
  return render(reply, httpStatusOf(code), text);
}
