-- Contexts: named texts agents read while they work (a brand voice, a style
-- guide), attached to agents or chosen for a turn. Workspaces: what a
-- session was working on (goal, records, notes, summary), saved for a later
-- session. Both are records like any: logged, archived, restored.
CREATE TABLE contexts (
    id          TEXT PRIMARY KEY,
    site_id     TEXT NOT NULL,
    env         TEXT NOT NULL,
    key         TEXT NOT NULL,
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    body        TEXT NOT NULL,
    version     BIGINT NOT NULL DEFAULT 1,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    archive_id  TEXT REFERENCES archives(id) DEFERRABLE,
    FOREIGN KEY (site_id, env) REFERENCES environments(site_id, key) DEFERRABLE
);
CREATE UNIQUE INDEX contexts_live_key ON contexts (site_id, env, key) WHERE archive_id IS NULL;

CREATE TABLE workspaces (
    id          TEXT PRIMARY KEY,
    site_id     TEXT NOT NULL,
    env         TEXT NOT NULL,
    name        TEXT NOT NULL,
    goal        TEXT NOT NULL DEFAULT '',
    summary     TEXT NOT NULL DEFAULT '',
    records     TEXT NOT NULL DEFAULT '[]',
    notes       TEXT NOT NULL DEFAULT '[]',
    session_id  TEXT,
    saved_by    TEXT NOT NULL,
    version     BIGINT NOT NULL DEFAULT 1,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    archive_id  TEXT REFERENCES archives(id) DEFERRABLE,
    FOREIGN KEY (site_id, env) REFERENCES environments(site_id, key) DEFERRABLE
);
CREATE UNIQUE INDEX workspaces_live_name ON workspaces (site_id, env, name) WHERE archive_id IS NULL;

-- The contexts an agent carries in every turn, by key; those a session's
-- person chose for its current turn.
ALTER TABLE agents ADD COLUMN contexts TEXT NOT NULL DEFAULT '[]';
ALTER TABLE agent_sessions ADD COLUMN contexts TEXT NOT NULL DEFAULT '[]';
