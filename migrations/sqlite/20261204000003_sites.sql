-- Sites an operator runs (issue 34): a site can be archived (its tokens,
-- sign-ins and delivery stop; everything it holds is kept, and restoring
-- it brings them back), and a token can be an instance's administrator's,
-- which may list, create, rename, archive and restore sites. A site's
-- administrators never see the others.
ALTER TABLE sites ADD COLUMN archived_at TEXT;
ALTER TABLE api_tokens ADD COLUMN instance_admin INTEGER NOT NULL DEFAULT 0;
