-- Pending confirmations of destructive tool calls.
-- A preview creates one; a human approves or rejects it; execution consumes
-- it exactly once. Bound to the exact arguments (args_hash) and to the
-- versions of the records the preview described (fingerprint).

CREATE TABLE confirmations (
    id            TEXT PRIMARY KEY,
    site_id       TEXT NOT NULL,
    env           TEXT NOT NULL,
    tool          TEXT NOT NULL,
    args          TEXT NOT NULL,      -- JSON of the arguments, without confirmation fields
    args_hash     TEXT NOT NULL,
    fingerprint   TEXT NOT NULL,      -- JSON array of [entity, id, version]
    preview       TEXT NOT NULL,      -- JSON: { message, items }
    requested_by  TEXT NOT NULL,
    session_id    TEXT,
    turn_id       TEXT,
    status        TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'used')),
    created_at    TEXT NOT NULL,
    expires_at    TEXT NOT NULL,
    resolved_by   TEXT,
    resolved_at   TEXT,
    reason        TEXT,
    FOREIGN KEY (site_id, env) REFERENCES environments(site_id, key)
);
CREATE INDEX confirmations_session ON confirmations (session_id, tool, args_hash);
CREATE INDEX confirmations_scope ON confirmations (site_id, env, status, created_at);
