-- Full-text search of images: file name, alt text, description, tags and
-- categories, stemmed (Porter) so "mountains" finds "mountain", ranked by
-- BM25. Kept current by triggers; the rowid is the image row's.
CREATE VIRTUAL TABLE images_fts USING fts5(
    filename, alt, description, tags, categories,
    content = 'images', content_rowid = 'rowid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER images_fts_insert AFTER INSERT ON images BEGIN
    INSERT INTO images_fts (rowid, filename, alt, description, tags, categories)
    VALUES (new.rowid, new.filename, new.alt, new.description, new.tags, new.categories);
END;

CREATE TRIGGER images_fts_delete AFTER DELETE ON images BEGIN
    INSERT INTO images_fts (images_fts, rowid, filename, alt, description, tags, categories)
    VALUES ('delete', old.rowid, old.filename, old.alt, old.description, old.tags, old.categories);
END;

CREATE TRIGGER images_fts_update AFTER UPDATE OF filename, alt, description, tags, categories ON images BEGIN
    INSERT INTO images_fts (images_fts, rowid, filename, alt, description, tags, categories)
    VALUES ('delete', old.rowid, old.filename, old.alt, old.description, old.tags, old.categories);
    INSERT INTO images_fts (rowid, filename, alt, description, tags, categories)
    VALUES (new.rowid, new.filename, new.alt, new.description, new.tags, new.categories);
END;

INSERT INTO images_fts (images_fts) VALUES ('rebuild');

-- Vectors of records for semantic search, one per record and model, with
-- the text they were made of (so a changed record is embedded again).
CREATE TABLE embeddings (
    entity_id   TEXT NOT NULL,
    model       TEXT NOT NULL,
    entity      TEXT NOT NULL,
    site_id     TEXT NOT NULL,
    env         TEXT NOT NULL,
    text_hash   TEXT NOT NULL,
    version     INTEGER NOT NULL,   -- the record's version it was made at
    dims        INTEGER NOT NULL,
    vector      BLOB NOT NULL,      -- little-endian f32, L2-normalised
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (entity_id, model)
);
CREATE INDEX embeddings_scope ON embeddings (site_id, env, entity, model);
