-- Quire's initial schema.
-- Every content table carries (site_id, env): the tenancy scope.
-- Deletes archive: archive_id is set instead of removing the row; live rows
-- have archive_id IS NULL, and uniqueness holds among live rows only.

CREATE TABLE sites (
    id          TEXT PRIMARY KEY,
    slug        TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    created_at  TEXT NOT NULL
);

CREATE TABLE environments (
    site_id     TEXT NOT NULL REFERENCES sites(id),
    key         TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (site_id, key)
);

CREATE TABLE users (
    id          TEXT PRIMARY KEY,
    email       TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    grp         TEXT NOT NULL CHECK (grp IN ('admin', 'editor', 'author', 'viewer')),
    created_at  TEXT NOT NULL
);

CREATE TABLE api_tokens (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    token_hash    TEXT NOT NULL UNIQUE,
    prefix        TEXT NOT NULL,
    grp           TEXT NOT NULL CHECK (grp IN ('admin', 'editor', 'author', 'viewer')),
    site_id       TEXT NOT NULL REFERENCES sites(id),
    environments  TEXT,               -- JSON array of env keys; NULL = every environment
    user_id       TEXT REFERENCES users(id),
    expires_at    TEXT,
    created_at    TEXT NOT NULL,
    revoked_at    TEXT
);

CREATE TABLE archives (
    id           TEXT PRIMARY KEY,
    site_id      TEXT NOT NULL,
    env          TEXT NOT NULL,
    entity       TEXT NOT NULL,
    entity_id    TEXT NOT NULL,
    label        TEXT NOT NULL,
    items        TEXT NOT NULL,       -- JSON array of { entity, id, label }
    archived_by  TEXT NOT NULL,
    archived_at  TEXT NOT NULL,
    restored_at  TEXT,
    restored_by  TEXT,
    FOREIGN KEY (site_id, env) REFERENCES environments(site_id, key)
);
CREATE INDEX archives_scope ON archives (site_id, env, id);

CREATE TABLE pages (
    id            TEXT PRIMARY KEY,
    site_id       TEXT NOT NULL,
    env           TEXT NOT NULL,
    name          TEXT NOT NULL,
    slug          TEXT NOT NULL,
    parent_id     TEXT REFERENCES pages(id),
    is_protected  INTEGER NOT NULL DEFAULT 0,
    meta          TEXT NOT NULL DEFAULT '{}',
    indexing      INTEGER NOT NULL DEFAULT 1,
    sort_order    INTEGER NOT NULL DEFAULT 0,
    status        TEXT NOT NULL,
    version       INTEGER NOT NULL DEFAULT 1,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    archive_id    TEXT REFERENCES archives(id),
    FOREIGN KEY (site_id, env) REFERENCES environments(site_id, key)
);
CREATE UNIQUE INDEX pages_live_slug ON pages (site_id, env, slug) WHERE archive_id IS NULL;
CREATE INDEX pages_tree ON pages (site_id, env, parent_id, sort_order, id);
CREATE INDEX pages_order ON pages (site_id, env, sort_order, id);

CREATE TABLE section_templates (
    id           TEXT PRIMARY KEY,
    site_id      TEXT NOT NULL,
    env          TEXT NOT NULL,
    key          TEXT NOT NULL,
    name         TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT '',
    fields       TEXT NOT NULL,
    version      INTEGER NOT NULL DEFAULT 1,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    archive_id   TEXT REFERENCES archives(id),
    FOREIGN KEY (site_id, env) REFERENCES environments(site_id, key)
);
CREATE UNIQUE INDEX section_templates_live_key ON section_templates (site_id, env, key) WHERE archive_id IS NULL;

CREATE TABLE page_sections (
    id            TEXT PRIMARY KEY,
    site_id       TEXT NOT NULL,
    env           TEXT NOT NULL,
    page_id       TEXT NOT NULL REFERENCES pages(id),
    template_key  TEXT NOT NULL,
    content       TEXT NOT NULL DEFAULT '{}',
    sort_order    INTEGER NOT NULL DEFAULT 0,
    status        TEXT NOT NULL,
    hidden        INTEGER NOT NULL DEFAULT 0,
    version       INTEGER NOT NULL DEFAULT 1,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    archive_id    TEXT REFERENCES archives(id),
    FOREIGN KEY (site_id, env) REFERENCES environments(site_id, key)
);
CREATE INDEX page_sections_page ON page_sections (page_id, sort_order, id);

CREATE TABLE collections (
    id          TEXT PRIMARY KEY,
    site_id     TEXT NOT NULL,
    env         TEXT NOT NULL,
    slug        TEXT NOT NULL,
    name        TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('posts', 'entries')),
    fields      TEXT NOT NULL,
    version     INTEGER NOT NULL DEFAULT 1,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    archive_id  TEXT REFERENCES archives(id),
    FOREIGN KEY (site_id, env) REFERENCES environments(site_id, key)
);
CREATE UNIQUE INDEX collections_live_slug ON collections (site_id, env, slug) WHERE archive_id IS NULL;

CREATE TABLE entries (
    id              TEXT PRIMARY KEY,
    site_id         TEXT NOT NULL,
    env             TEXT NOT NULL,
    collection_id   TEXT NOT NULL REFERENCES collections(id),
    slug            TEXT NOT NULL,
    title           TEXT NOT NULL,
    content         TEXT NOT NULL DEFAULT '{}',
    status          TEXT NOT NULL,
    author          TEXT,
    category        TEXT,
    tags            TEXT NOT NULL DEFAULT '[]',
    excerpt         TEXT,
    featured_image  TEXT,
    published_at    TEXT,
    version         INTEGER NOT NULL DEFAULT 1,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    archive_id      TEXT REFERENCES archives(id),
    FOREIGN KEY (site_id, env) REFERENCES environments(site_id, key)
);
CREATE UNIQUE INDEX entries_live_slug ON entries (collection_id, slug) WHERE archive_id IS NULL;
CREATE INDEX entries_list ON entries (site_id, env, collection_id, id);
CREATE INDEX entries_status ON entries (site_id, env, collection_id, status, id);

CREATE TABLE images (
    id            TEXT PRIMARY KEY,
    site_id       TEXT NOT NULL,
    env           TEXT NOT NULL,
    url           TEXT NOT NULL,
    filename      TEXT NOT NULL,
    mime          TEXT NOT NULL,
    width         INTEGER,
    height        INTEGER,
    bytes         INTEGER,
    content_hash  TEXT,
    alt           TEXT,
    description   TEXT,
    tags          TEXT NOT NULL DEFAULT '[]',
    categories    TEXT NOT NULL DEFAULT '[]',
    status        TEXT NOT NULL,
    source        TEXT NOT NULL,
    attribution   TEXT,
    variants      TEXT NOT NULL DEFAULT '{}',
    version       INTEGER NOT NULL DEFAULT 1,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    archive_id    TEXT REFERENCES archives(id),
    FOREIGN KEY (site_id, env) REFERENCES environments(site_id, key)
);
CREATE INDEX images_scope ON images (site_id, env, id);
CREATE INDEX images_hash ON images (site_id, env, content_hash);

CREATE TABLE navigations (
    id          TEXT PRIMARY KEY,
    site_id     TEXT NOT NULL,
    env         TEXT NOT NULL,
    key         TEXT NOT NULL,
    name        TEXT NOT NULL,
    max_items   INTEGER,
    version     INTEGER NOT NULL DEFAULT 1,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    archive_id  TEXT REFERENCES archives(id),
    FOREIGN KEY (site_id, env) REFERENCES environments(site_id, key)
);
CREATE UNIQUE INDEX navigations_live_key ON navigations (site_id, env, key) WHERE archive_id IS NULL;

CREATE TABLE nav_items (
    id             TEXT PRIMARY KEY,
    site_id        TEXT NOT NULL,
    env            TEXT NOT NULL,
    navigation_id  TEXT NOT NULL REFERENCES navigations(id),
    parent_id      TEXT REFERENCES nav_items(id),
    label          TEXT NOT NULL,
    target_type    TEXT NOT NULL,
    target_id      TEXT,
    url            TEXT,
    sort_order     INTEGER NOT NULL DEFAULT 0,
    visible        INTEGER NOT NULL DEFAULT 1,
    version        INTEGER NOT NULL DEFAULT 1,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    archive_id     TEXT REFERENCES archives(id),
    FOREIGN KEY (site_id, env) REFERENCES environments(site_id, key)
);
CREATE INDEX nav_items_nav ON nav_items (navigation_id, sort_order, id);

-- The change log: append-only.
CREATE TABLE changes (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    site_id     TEXT NOT NULL,
    env         TEXT NOT NULL,
    actor       TEXT NOT NULL,
    surface     TEXT NOT NULL,
    session_id  TEXT,
    turn_id     TEXT,
    entity      TEXT NOT NULL,
    entity_id   TEXT NOT NULL,
    action      TEXT NOT NULL,
    before      TEXT,
    after       TEXT,
    at          TEXT NOT NULL
);
CREATE INDEX changes_entity ON changes (site_id, env, entity, entity_id, id);
CREATE INDEX changes_scope ON changes (site_id, env, id);
CREATE INDEX changes_session ON changes (session_id, turn_id);
