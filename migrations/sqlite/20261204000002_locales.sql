-- Locales (decision 0050): each site's languages, one of them the default
-- (the records' own values are in it), each other with a fallback; and
-- the translations of documents into the others, drafted and published on
-- their own like any document. Every site starts with English, the
-- language of what it holds today.
CREATE TABLE site_locales (
    site_id      TEXT NOT NULL REFERENCES sites(id),
    tag          TEXT NOT NULL,
    fallback     TEXT,
    is_default   INTEGER NOT NULL DEFAULT 0,
    position     INTEGER NOT NULL DEFAULT 0,
    created_at   TEXT NOT NULL,
    archived_at  TEXT,
    PRIMARY KEY (site_id, tag)
);
INSERT INTO site_locales (site_id, tag, fallback, is_default, position, created_at)
SELECT id, 'en', NULL, 1, 0, created_at FROM sites;

CREATE TABLE translations (
    id            TEXT PRIMARY KEY,
    site_id       TEXT NOT NULL,
    env           TEXT NOT NULL,
    record_kind   TEXT NOT NULL,
    record_id     TEXT NOT NULL,
    locale        TEXT NOT NULL,
    slug          TEXT,
    slug_scope    TEXT NOT NULL,
    fields        TEXT NOT NULL DEFAULT '{}',
    source_hash   TEXT NOT NULL DEFAULT '',
    status        TEXT NOT NULL,
    version       INTEGER NOT NULL DEFAULT 1,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    archive_id    TEXT REFERENCES archives(id),
    FOREIGN KEY (site_id, env) REFERENCES environments(site_id, key)
);
CREATE UNIQUE INDEX translations_live ON translations (site_id, env, record_id, locale) WHERE archive_id IS NULL;
CREATE UNIQUE INDEX translations_live_slug ON translations (site_id, env, slug_scope, slug)
    WHERE archive_id IS NULL AND slug IS NOT NULL;

CREATE TABLE published_translations (
    id            TEXT PRIMARY KEY,
    site_id       TEXT NOT NULL,
    env           TEXT NOT NULL,
    record_kind   TEXT NOT NULL,
    record_id     TEXT NOT NULL,
    locale        TEXT NOT NULL,
    slug          TEXT,
    slug_scope    TEXT NOT NULL,
    fields        TEXT NOT NULL DEFAULT '{}',
    source_hash   TEXT NOT NULL DEFAULT '',
    status        TEXT NOT NULL,
    version       INTEGER NOT NULL DEFAULT 1,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    archive_id    TEXT
);
CREATE UNIQUE INDEX published_translations_live ON published_translations (site_id, env, record_id, locale)
    WHERE archive_id IS NULL;
CREATE INDEX published_translations_slug ON published_translations (site_id, env, slug_scope, slug)
    WHERE archive_id IS NULL;
