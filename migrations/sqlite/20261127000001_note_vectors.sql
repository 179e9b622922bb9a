-- Vectors of the notes in each site's vault. Notes are files, not rows: a
-- note is known by its path, and `stamp` (its modification time and size
-- when read) tells the sweep which notes changed without reading them.
-- The in-memory sets of `vector_sets` take notes as entity 'note' with an
-- empty env (a vault belongs to a site, not to one of its environments).
CREATE TABLE note_vectors (
    site_id     TEXT NOT NULL,
    model       TEXT NOT NULL,
    path        TEXT NOT NULL,
    stamp       TEXT NOT NULL,
    text_hash   TEXT NOT NULL,
    dims        INTEGER NOT NULL,
    vector      BLOB NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (site_id, model, path)
);
