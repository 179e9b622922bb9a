-- An agent may write in release mode: the check on write_mode admits it.
-- SQLite cannot change a column's check, so the column is made anew.
ALTER TABLE agents RENAME COLUMN write_mode TO write_mode_before_release;
ALTER TABLE agents ADD COLUMN write_mode TEXT NOT NULL DEFAULT 'draft'
    CHECK (write_mode IN ('draft', 'direct', 'release'));
UPDATE agents SET write_mode = write_mode_before_release;
ALTER TABLE agents DROP COLUMN write_mode_before_release;
