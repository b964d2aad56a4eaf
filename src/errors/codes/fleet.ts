// Codes of a fleet of serve processes on one database (docs/decisions/0072): thrown (an
// infrastructure condition, never an input finding) and logged with the lease's name.
export const fleetErrorCodes = {
  FLEET_LEASE_LOST: "A process wrote for a file source, singleton job or scheme link whose lease it no longer holds (another process was granted it, or its lease ran out while it could not renew); the write was rolled back and the process stopped that work. The new holder carries on from what was committed.",
} as const satisfies Record<string, string>;
