-- Where a site's own front end shows a draft: a URL with placeholders
-- ({slug}, {collection}, {kind}, {id}, {token}); none: the delivery API.
ALTER TABLE sites ADD COLUMN preview_url TEXT;

-- Preview links: a short-lived secret (stored hashed) that lets a front
-- end read one site's and environment's drafts through delivery.
CREATE TABLE preview_links (
    hash        TEXT PRIMARY KEY,
    site_id     TEXT NOT NULL,
    env         TEXT NOT NULL,
    created_by  TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL
);
CREATE INDEX preview_links_expiry ON preview_links (expires_at);
