-- Environments an operator runs (issue 34, decision 0051): a display name,
-- archived (its tokens stop; everything it holds is kept), locked (content
-- reaches it only by promotion) and the environment it was copied from.
ALTER TABLE environments ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE environments ADD COLUMN archived_at TEXT;
ALTER TABLE environments ADD COLUMN locked INTEGER NOT NULL DEFAULT 0;
ALTER TABLE environments ADD COLUMN copied_from TEXT;

-- Which records are the same record in two environments: a record's
-- lineage is its id where it was first made; a copy or a promotion into
-- another environment makes a record of a new id there with the same
-- lineage. A record without a row here is its own lineage. (Ids come
-- before kinds, so an export's order does not hang on a collation.)
CREATE TABLE record_lineage (
    site_id    TEXT NOT NULL,
    env        TEXT NOT NULL,
    record_id  TEXT NOT NULL,
    entity     TEXT NOT NULL,
    lineage    TEXT NOT NULL,
    PRIMARY KEY (site_id, env, record_id),
    FOREIGN KEY (site_id, env) REFERENCES environments(site_id, key)
);
CREATE UNIQUE INDEX record_lineage_by_lineage ON record_lineage (site_id, env, entity, lineage);

-- What two environments last agreed a record held (a digest of its working
-- and published copies, ids read as lineages), per pair of environments in
-- name order: a side whose digest moved since changed there.
CREATE TABLE environment_bases (
    site_id  TEXT NOT NULL,
    env_a    TEXT NOT NULL,
    env_b    TEXT NOT NULL,
    lineage  TEXT NOT NULL,
    entity   TEXT NOT NULL,
    digest   TEXT NOT NULL,
    PRIMARY KEY (site_id, env_a, env_b, entity, lineage)
);

-- Each promotion from one environment into another: its changes are
-- logged in the target under the session `promotion:<id>`, turn 1, so
-- undoing it is undoing that turn; `bases` keeps the pair's bases from
-- before it, put back by the undo.
CREATE TABLE promotions (
    id          TEXT PRIMARY KEY,
    site_id     TEXT NOT NULL,
    source_env  TEXT NOT NULL,
    target_env  TEXT NOT NULL,
    actor       TEXT NOT NULL,
    items       TEXT NOT NULL,
    bases       TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    undone_at   TEXT,
    undone_by   TEXT,
    FOREIGN KEY (site_id, target_env) REFERENCES environments(site_id, key)
);
CREATE INDEX promotions_by_target ON promotions (site_id, target_env, created_at);
