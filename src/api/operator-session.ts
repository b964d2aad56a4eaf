import type { FastifyReply, FastifyRequest } from "fastify";
import type { Queryable } from "../db/pool.ts";
import type { Operator, OperatorRole } from "../operators/operators.ts";
import { csrfTokenMatches, findSession, type OperatorSession } from "../operators/sessions.ts";
import { send } from "./http-context.ts";
import { problemReply } from "../requests/reply.ts";

export const SESSION_COOKIE = "clearline_session";

declare module "fastify" {
  interface FastifyRequest {
    operatorSession?: OperatorSession;
    sessionToken?: string;
  }
}

/** One cookie's value from the Cookie header (no cookie library: one name, read-only). */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return decodeURIComponent(value.join("="));
  }
  return undefined;
}

/**
 * HttpOnly: page scripts never read it; SameSite=Strict: no other site's page sends it; Secure
 * when the request came over TLS (a plain-HTTP loopback console would otherwise never get it back).
 */
export function sessionCookie(request: FastifyRequest, token: string, maxAgeSeconds: number): string {
  const secure = request.protocol === "https" ? "; Secure" : "";
  return `${SESSION_COOKIE}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`;
}

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

function presentedCsrfToken(request: FastifyRequest): string | undefined {
  const header = request.headers["x-csrf-token"];
  if (typeof header === "string") return header;
  const body = request.body as { csrf_token?: unknown } | undefined;
  return typeof body?.csrf_token === "string" ? body.csrf_token : undefined;
}

/** The request's live session, and on a mutating request its CSRF token checked; else why not. */
export async function checkSession(db: Queryable, request: FastifyRequest): Promise<"OPERATOR_SESSION_MISSING" | "OPERATOR_CSRF_REFUSED" | undefined> {
  const token = cookieValue(request.headers.cookie, SESSION_COOKIE);
  const session = token ? await findSession(db, token) : undefined;
  if (!token || !session) return "OPERATOR_SESSION_MISSING";
  if (MUTATING.has(request.method) && !csrfTokenMatches(session, presentedCsrfToken(request))) return "OPERATOR_CSRF_REFUSED";
  request.operatorSession = session;
  request.sessionToken = token;
  return undefined;
}

/** preHandler of the operations API: a live session, and on a mutating request its CSRF token. */
export function requireSession(db: Queryable) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const refused = await checkSession(db, request);
    if (refused === "OPERATOR_SESSION_MISSING") return send(reply, problemReply(refused, "sign in: POST /v1/ops/session with tenant, name and secret"));
    if (refused) return send(reply, problemReply(refused, "send the session's CSRF token in x-csrf-token (or the csrf_token field of a form)"));
    return undefined;
  };
}

const rank: Record<OperatorRole, number> = { viewer: 0, approver: 1, admin: 2 };

export function operatorOf(request: FastifyRequest): Operator {
  if (!request.operatorSession) throw new Error("operations route reached without a session");
  return request.operatorSession.operator;
}

/** The operator when their role is at least `role`; else the 403 already sent. */
export function operatorWithRole(request: FastifyRequest, reply: FastifyReply, role: OperatorRole): Operator | undefined {
  const operator = operatorOf(request);
  if (rank[operator.role] >= rank[role]) return operator;
  void send(reply, problemReply("OPERATOR_ROLE_FORBIDDEN", `${operator.name} is a ${operator.role}; this needs ${role} or above`));
  return undefined;
}
