-- Where an agent's writes go: drafts (the default, for the agents there
-- are too) or straight to the public site.
ALTER TABLE agents ADD COLUMN write_mode TEXT NOT NULL DEFAULT 'draft' CHECK (write_mode IN ('draft', 'direct'));
