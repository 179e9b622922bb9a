-- Fair use, shared by every replica and kept across restarts.

-- How much a key used in a fixed window: a token's or person's requests
-- or agent turns, a site's model tokens. A window is named by its start,
-- in seconds since 1970; windows long past are forgotten.
CREATE TABLE usage_counts (
    key           TEXT NOT NULL,
    window_start  INTEGER NOT NULL,
    count         INTEGER NOT NULL,
    PRIMARY KEY (key, window_start)
) WITHOUT ROWID;
CREATE INDEX usage_counts_window ON usage_counts (window_start);

-- Failed sign-ins per email (folded to lower case): how many since
-- first_at, and the lock they earned (seconds since 1970).
CREATE TABLE sign_in_failures (
    email         TEXT PRIMARY KEY,
    failures      INTEGER NOT NULL,
    first_at      INTEGER NOT NULL,
    locked_until  INTEGER
);
