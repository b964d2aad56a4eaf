export const incidentErrorCodes = {
  INCIDENT_PERIOD_INVALID: "since and until must be dates or timestamps, since before until.",
  INCIDENT_PERIMETER_TOO_LARGE: "The perimeter selects more records than one incident takes; narrow the filters.",
  INCIDENT_UNKNOWN: "No incident with this id exists for the tenant.",
  INCIDENT_CHANNEL_UNKNOWN: "The channel filter is not one of http, ach, iso20022, iso8583.",
  SOURCE_UNKNOWN: "The source is not a partner of the tenant (partner:<name or id>) nor iso8583.",
} as const satisfies Record<string, string>;
