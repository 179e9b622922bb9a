-- People who sign in to the back-office. A user has one group and works on
-- the sites listed in user_sites (each with all or some environments).
-- The users table of the first migration (id, email UNIQUE, name, grp,
-- created_at) gains what signing in needs.
ALTER TABLE users ADD COLUMN password_hash TEXT;   -- argon2id PHC string; NULL until a password is set
ALTER TABLE users ADD COLUMN disabled_at TEXT;
ALTER TABLE users ADD COLUMN updated_at TEXT NOT NULL DEFAULT '';

CREATE TABLE user_sites (
    user_id      TEXT NOT NULL REFERENCES users (id),
    site_id      TEXT NOT NULL REFERENCES sites (id),
    environments TEXT,                       -- JSON array; NULL means all of the site's
    PRIMARY KEY (user_id, site_id)
);

-- Browser sessions: only the SHA-256 of the cookie's secret is stored.
CREATE TABLE web_sessions (
    id           TEXT PRIMARY KEY,
    token_hash   TEXT NOT NULL UNIQUE,
    user_id      TEXT NOT NULL REFERENCES users (id),
    csrf         TEXT NOT NULL,
    site_id      TEXT NOT NULL REFERENCES sites (id),
    env          TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    ended_at     TEXT
);
CREATE INDEX web_sessions_user ON web_sessions (user_id) WHERE ended_at IS NULL;

-- One-time sign-in links (first start, password resets by an admin).
CREATE TABLE sign_in_links (
    token_hash TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id),
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at    TEXT
);
