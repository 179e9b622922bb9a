-- How a token's destructive calls are approved: 'user' (a person approves the
-- confirmationId) or 'conversational' (the same session confirms after a
-- preview; for a single trusted user).
ALTER TABLE api_tokens ADD COLUMN approval_policy TEXT NOT NULL DEFAULT 'user'
    CHECK (approval_policy IN ('user', 'conversational'));
