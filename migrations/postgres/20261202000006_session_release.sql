-- The release a person chose for an agent session's turns in release mode
-- (none: each turn makes a release of its own).
ALTER TABLE agent_sessions ADD COLUMN release_id TEXT;
