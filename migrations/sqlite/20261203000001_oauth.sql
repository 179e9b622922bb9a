-- OAuth 2.1 for remote MCP clients: registered clients, authorization
-- codes, and the access and refresh tokens of a grant. A grant is an API
-- token (`api_tokens.oauth_client_id` set) that is never presented itself:
-- revoking it ends every token it issued. Secrets are stored hashed.
CREATE TABLE oauth_clients (
    id             TEXT PRIMARY KEY,
    name           TEXT NOT NULL,
    redirect_uris  TEXT NOT NULL,
    created_at     TEXT NOT NULL
);

CREATE TABLE oauth_codes (
    hash            TEXT PRIMARY KEY,
    client_id       TEXT NOT NULL REFERENCES oauth_clients (id),
    token_id        TEXT NOT NULL REFERENCES api_tokens (id),
    redirect_uri    TEXT NOT NULL,
    code_challenge  TEXT NOT NULL,
    resource        TEXT NOT NULL,
    expires_at      TEXT NOT NULL,
    used_at         TEXT
);

CREATE TABLE oauth_tokens (
    hash        TEXT PRIMARY KEY,
    token_id    TEXT NOT NULL REFERENCES api_tokens (id),
    kind        TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    resource    TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    used_at     TEXT
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (token_id);

ALTER TABLE api_tokens ADD COLUMN oauth_client_id TEXT;
-- Which tools an OAuth grant offers over MCP: all, readonly or discover.
ALTER TABLE api_tokens ADD COLUMN mcp_tools TEXT;
