-- Incident tooling (docs/decisions/0015-incident-perimeter-and-compensation.md): stop the source,
-- take the full perimeter, compensate by a keyed batch after a dry run, keep the record.

-- Sources an operator stopped: the drop folder or SFTP poller of a partner, or the ISO 8583
-- endpoint. A stopped source takes nothing new until it is resumed; what it had taken finishes.
CREATE TABLE source_pause (
  tenant_id    text        NOT NULL,
  source       text        NOT NULL,   -- "partner:<partner id>" (its drop folders and SFTP pollers), "iso8583"
  paused_by    text        NOT NULL,
  reason       text        NOT NULL,
  paused_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, source)
);

-- What happened, who handled it: kept for an auditor, never deleted.
CREATE TABLE incident (
  tenant_id     text        NOT NULL,
  incident_id   text        NOT NULL,
  title         text        NOT NULL,
  criteria      jsonb       NOT NULL,   -- the perimeter's filters: since, until, channel, partner, key prefix
  opened_by     text        NOT NULL,
  opened_at     timestamptz NOT NULL DEFAULT now(),
  records       integer     NOT NULL,
  totals        jsonb       NOT NULL,   -- amount by currency of the records with a transfer
  PRIMARY KEY (tenant_id, incident_id)
);

-- The perimeter as taken: every record the filters selected, with its transfer.
CREATE TABLE incident_record (
  tenant_id      text        NOT NULL,
  incident_id    text        NOT NULL,
  seq            integer     NOT NULL,
  channel        text        NOT NULL,
  natural_key    text        NOT NULL,
  source_ref     text,                 -- file and position, HTTP intent, ISO 8583 message
  transfer_key   text,
  amount_minor   bigint      NOT NULL,
  currency       char(3)     NOT NULL,
  occurred_at    timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, incident_id, seq),
  FOREIGN KEY (tenant_id, incident_id) REFERENCES incident (tenant_id, incident_id)
);

-- Each compensation decided for the incident: its key, what happened, who decided and why.
CREATE TABLE incident_compensation (
  tenant_id         text        NOT NULL,
  incident_id       text        NOT NULL,
  transfer_key      text        NOT NULL,
  compensation_key  text        NOT NULL,   -- <transfer key>:compensate, the key a review replace uses too
  outcome           text        NOT NULL CHECK (outcome IN ('posted', 'already_compensated', 'refused')),
  detail            text,
  decided_by        text        NOT NULL,
  reason            text        NOT NULL,
  decided_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, incident_id, transfer_key),
  FOREIGN KEY (tenant_id, incident_id) REFERENCES incident (tenant_id, incident_id)
);
