-- Webhooks: subscriptions of a site (and perhaps one environment) to
-- events, and the outbox of their deliveries, written in the transaction
-- of the change that caused each, delivered and retried from there.
CREATE TABLE webhooks (
    id           TEXT PRIMARY KEY,
    site_id      TEXT NOT NULL,
    env          TEXT,
    url          TEXT NOT NULL,
    events       TEXT NOT NULL,
    kinds        TEXT NOT NULL,
    secrets      TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT '',
    created_by   TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    archived_at  TEXT
);
CREATE INDEX webhooks_site ON webhooks (site_id);

CREATE TABLE webhook_deliveries (
    id            TEXT PRIMARY KEY,
    webhook_id    TEXT NOT NULL REFERENCES webhooks (id),
    site_id       TEXT NOT NULL,
    env           TEXT NOT NULL,
    event         TEXT NOT NULL,
    subject       TEXT NOT NULL,
    seq           BIGINT NOT NULL,
    payload       TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts      INTEGER NOT NULL DEFAULT 0,
    next_at       BIGINT NOT NULL,
    lease_until   BIGINT,
    last_status   INTEGER,
    last_error    TEXT,
    created_at    TEXT NOT NULL,
    delivered_at  TEXT
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_at);
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (webhook_id, subject, seq);
CREATE INDEX webhook_deliveries_site ON webhook_deliveries (site_id, env, created_at);
