import { achLinkedKinds } from "../normalize/from-ach.ts";

/**
 * A file of answers (every record a return, a dishonored or contested return, or a NOC) and a
 * file holding forward entries never correct each other (docs/decisions/0011, part 4): a
 * processor that returns entries under a copy of the forward file's header sends a new file,
 * not a new version of the forward one. A rejected record, which has no kind, counts for neither.
 */
export const answerKinds: readonly string[] = achLinkedKinds;

export function isForwardKind(kind: string): boolean {
  return !answerKinds.includes(kind);
}
