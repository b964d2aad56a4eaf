/**
 * A request body's validation issues (zod's, read structurally) as `field: message` pairs for a
 * problem detail: one shape whichever channel refused the body (HTTP route or inbox).
 */
export function describeIssues(error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> }): Array<{ field: string; message: string }> {
  return error.issues.map((issue) => ({ field: issue.path.map(String).join(".") || "(body)", message: issue.message }));
}
