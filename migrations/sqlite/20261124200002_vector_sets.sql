-- A counter per set of vectors (scope, entity, model), raised by every
-- vector written, so a process holding the set in memory knows with one
-- lookup whether another process wrote one since.
CREATE TABLE vector_sets (
    site_id     TEXT NOT NULL,
    env         TEXT NOT NULL,
    entity      TEXT NOT NULL,
    model       TEXT NOT NULL,
    generation  INTEGER NOT NULL,
    PRIMARY KEY (site_id, env, entity, model)
);
INSERT INTO vector_sets (site_id, env, entity, model, generation)
    SELECT site_id, env, entity, model, 1 FROM embeddings GROUP BY site_id, env, entity, model;
