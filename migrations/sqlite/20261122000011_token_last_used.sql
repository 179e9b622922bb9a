-- When each token was last presented. Written at most once a minute per
-- token by a serving process, so authenticating stays a read.
ALTER TABLE api_tokens ADD COLUMN last_used_at TEXT;

-- A serving process notices revocations made by another process (the CLI)
-- by counting revoked tokens, which this index answers without reading the
-- table.
CREATE INDEX api_tokens_revoked ON api_tokens (revoked_at) WHERE revoked_at IS NOT NULL;

-- Listing a site's tokens.
CREATE INDEX api_tokens_site ON api_tokens (site_id, created_at);
