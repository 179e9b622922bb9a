-- An agent may write in release mode: the check on write_mode admits it.
ALTER TABLE agents DROP CONSTRAINT agents_write_mode_check;
ALTER TABLE agents ADD CONSTRAINT agents_write_mode_check CHECK (write_mode IN ('draft', 'direct', 'release'));
