-- Media: staged uploads, the files images are served from, and a durable
-- job queue worked by serving processes.

-- A file received (multipart upload, base64 data) and typed from its bytes,
-- waiting under its site's folder to become an image. Never served.
CREATE TABLE uploads (
    id          TEXT PRIMARY KEY,
    site_id     TEXT NOT NULL,
    env         TEXT NOT NULL,
    url         TEXT NOT NULL UNIQUE,
    path        TEXT NOT NULL,
    filename    TEXT NOT NULL,
    mime        TEXT NOT NULL,
    bytes       INTEGER NOT NULL,
    sha256      TEXT NOT NULL,
    width       INTEGER NOT NULL,
    height      INTEGER NOT NULL,
    created_by  TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    FOREIGN KEY (site_id, env) REFERENCES environments(site_id, key)
);
CREATE INDEX uploads_scope ON uploads (site_id, env, id);

-- Every file served under /uploads, with the type we wrote it as. A file is
-- served only while one of its images is live and completed.
CREATE TABLE image_files (
    path      TEXT NOT NULL,
    image_id  TEXT NOT NULL REFERENCES images(id),
    mime      TEXT NOT NULL,
    PRIMARY KEY (path, image_id)
);

-- Background work. queued → running (leased; an expired lease is claimed
-- again) → done, or back to queued with a later run_after, or failed.
CREATE TABLE jobs (
    id            TEXT PRIMARY KEY,
    kind          TEXT NOT NULL,
    site_id       TEXT NOT NULL,
    env           TEXT NOT NULL,
    subject_id    TEXT NOT NULL,
    payload       TEXT NOT NULL DEFAULT '{}',
    status        TEXT NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    max_attempts  INTEGER NOT NULL,
    run_after     INTEGER NOT NULL,   -- unix milliseconds
    lease_until   INTEGER,            -- unix milliseconds
    error         TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX jobs_due ON jobs (status, run_after);
CREATE INDEX jobs_subject ON jobs (subject_id);

ALTER TABLE images ADD COLUMN color TEXT;
ALTER TABLE images ADD COLUMN error TEXT;
