-- The published copy of each document, beside the working copy: a page
-- with its sections, an entry, a navigation with its items. Delivery reads
-- these tables only. Each holds the same columns as its working table, a
-- row per record whose document is published, and no foreign keys: a
-- published copy refers to what was published with it, not to what the
-- working tables hold now (decision 0046).

CREATE TABLE published_pages (
    id            TEXT PRIMARY KEY,
    site_id       TEXT NOT NULL,
    env           TEXT NOT NULL,
    name          TEXT NOT NULL,
    slug          TEXT NOT NULL,
    parent_id     TEXT,
    is_protected  BIGINT NOT NULL DEFAULT 0,
    meta          TEXT NOT NULL DEFAULT '{}',
    indexing      BIGINT NOT NULL DEFAULT 1,
    sort_order    BIGINT NOT NULL DEFAULT 0,
    status        TEXT NOT NULL,
    version       BIGINT NOT NULL DEFAULT 1,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    archive_id    TEXT
);
CREATE UNIQUE INDEX published_pages_live_slug ON published_pages (site_id, env, slug) WHERE archive_id IS NULL;
CREATE INDEX published_pages_tree ON published_pages (site_id, env, parent_id, sort_order, id);

CREATE TABLE published_page_sections (
    id            TEXT PRIMARY KEY,
    site_id       TEXT NOT NULL,
    env           TEXT NOT NULL,
    page_id       TEXT NOT NULL,
    template_key  TEXT NOT NULL,
    content       TEXT NOT NULL DEFAULT '{}',
    sort_order    BIGINT NOT NULL DEFAULT 0,
    status        TEXT NOT NULL,
    hidden        BIGINT NOT NULL DEFAULT 0,
    version       BIGINT NOT NULL DEFAULT 1,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    archive_id    TEXT
);
CREATE INDEX published_page_sections_page ON published_page_sections (page_id, sort_order, id);

CREATE TABLE published_entries (
    id              TEXT PRIMARY KEY,
    site_id         TEXT NOT NULL,
    env             TEXT NOT NULL,
    collection_id   TEXT NOT NULL,
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
    version         BIGINT NOT NULL DEFAULT 1,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    archive_id      TEXT
);
CREATE UNIQUE INDEX published_entries_live_slug ON published_entries (collection_id, slug) WHERE archive_id IS NULL;
CREATE INDEX published_entries_list ON published_entries (site_id, env, collection_id, id);

CREATE TABLE published_navigations (
    id          TEXT PRIMARY KEY,
    site_id     TEXT NOT NULL,
    env         TEXT NOT NULL,
    key         TEXT NOT NULL,
    name        TEXT NOT NULL,
    max_items   BIGINT,
    version     BIGINT NOT NULL DEFAULT 1,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    archive_id  TEXT
);
CREATE UNIQUE INDEX published_navigations_live_key ON published_navigations (site_id, env, key) WHERE archive_id IS NULL;

CREATE TABLE published_nav_items (
    id             TEXT PRIMARY KEY,
    site_id        TEXT NOT NULL,
    env            TEXT NOT NULL,
    navigation_id  TEXT NOT NULL,
    parent_id      TEXT,
    label          TEXT NOT NULL,
    target_type    TEXT NOT NULL,
    target_id      TEXT,
    url            TEXT,
    sort_order     BIGINT NOT NULL DEFAULT 0,
    visible        BIGINT NOT NULL DEFAULT 1,
    version        BIGINT NOT NULL DEFAULT 1,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    archive_id     TEXT
);
CREATE INDEX published_nav_items_nav ON published_nav_items (navigation_id, sort_order, id);

-- What is published today becomes the published copy: published pages
-- with their live sections, published entries, every navigation with its
-- live items. Drafts stay drafts.
INSERT INTO published_pages (id, site_id, env, name, slug, parent_id, is_protected, meta, indexing, sort_order, status, version, created_at, updated_at)
SELECT id, site_id, env, name, slug, parent_id, is_protected, meta, indexing, sort_order, status, version, created_at, updated_at
FROM pages WHERE archive_id IS NULL AND status = 'published';

INSERT INTO published_page_sections (id, site_id, env, page_id, template_key, content, sort_order, status, hidden, version, created_at, updated_at)
SELECT s.id, s.site_id, s.env, s.page_id, s.template_key, s.content, s.sort_order, s.status, s.hidden, s.version, s.created_at, s.updated_at
FROM page_sections s JOIN published_pages p ON p.id = s.page_id AND p.site_id = s.site_id AND p.env = s.env
WHERE s.archive_id IS NULL;

INSERT INTO published_entries (id, site_id, env, collection_id, slug, title, content, status, author, category, tags, excerpt, featured_image, published_at, version, created_at, updated_at)
SELECT id, site_id, env, collection_id, slug, title, content, status, author, category, tags, excerpt, featured_image, published_at, version, created_at, updated_at
FROM entries WHERE archive_id IS NULL AND status = 'published';

INSERT INTO published_navigations (id, site_id, env, key, name, max_items, version, created_at, updated_at)
SELECT id, site_id, env, key, name, max_items, version, created_at, updated_at
FROM navigations WHERE archive_id IS NULL;

INSERT INTO published_nav_items (id, site_id, env, navigation_id, parent_id, label, target_type, target_id, url, sort_order, visible, version, created_at, updated_at)
SELECT i.id, i.site_id, i.env, i.navigation_id, i.parent_id, i.label, i.target_type, i.target_id, i.url, i.sort_order, i.visible, i.version, i.created_at, i.updated_at
FROM nav_items i JOIN published_navigations n ON n.id = i.navigation_id AND n.site_id = i.site_id AND n.env = i.env
WHERE i.archive_id IS NULL;
