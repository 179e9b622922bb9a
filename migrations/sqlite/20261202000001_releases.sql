-- Releases: named sets of documents (a page with its sections, an entry, a
-- navigation with its items) published together in one transaction, now
-- or at a time, and reverted together.

CREATE TABLE releases (
    id            TEXT PRIMARY KEY,
    site_id       TEXT NOT NULL,
    env           TEXT NOT NULL,
    name          TEXT NOT NULL,
    description   TEXT NOT NULL DEFAULT '',
    -- open, scheduled, published, reverted, discarded
    state         TEXT NOT NULL,
    publish_at    TEXT,
    created_by    TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    published_at  TEXT,
    published_by  TEXT,
    reverted_at   TEXT,
    reverted_by   TEXT,
    -- Increases with every change of the release or its items.
    version       INTEGER NOT NULL
);
CREATE INDEX releases_scope ON releases (site_id, env, state);

-- One row per document in a release. `document` is the document as the
-- release publishes it ({record, parts}; none for an unpublish or an
-- archive); `staged` holds the versions of its working and published
-- records when it was staged, which must still hold when the release
-- publishes. `replaced` and `outcome` are written when it publishes: what
-- was public before and what the release left, for its revert.
CREATE TABLE release_items (
    release_id    TEXT NOT NULL REFERENCES releases (id),
    kind          TEXT NOT NULL,
    document_id   TEXT NOT NULL,
    -- publish, unpublish, archive
    action        TEXT NOT NULL,
    label         TEXT NOT NULL,
    document      TEXT,
    staged        TEXT NOT NULL,
    revision      INTEGER NOT NULL,
    added_by      TEXT NOT NULL,
    added_at      TEXT NOT NULL,
    removed_at    TEXT,
    replaced      TEXT,
    outcome       TEXT,
    PRIMARY KEY (release_id, kind, document_id)
);
CREATE INDEX release_items_document ON release_items (kind, document_id);
