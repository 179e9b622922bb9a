-- What an agent in release mode staged, per turn and document: the
-- release's item before the turn (null: the document was not in it) and
-- after, so the turn can be undone; every staged change is logged here, as
-- the change log holds the working copies' changes.
CREATE TABLE release_changes (
    release_id    TEXT NOT NULL REFERENCES releases (id),
    kind          TEXT NOT NULL,
    document_id   TEXT NOT NULL,
    session_id    TEXT NOT NULL,
    turn_id       TEXT NOT NULL,
    actor         TEXT NOT NULL,
    before        TEXT,
    after         TEXT,
    at            TEXT NOT NULL,
    undone_at     TEXT,
    PRIMARY KEY (release_id, kind, document_id, session_id, turn_id)
);
CREATE INDEX release_changes_turn ON release_changes (session_id, turn_id);
