-- A change-log record stores what changed: the changed fields' new values
-- (`patch`) and their previous values (`prior`). Whole snapshots stay in
-- `before` / `after` only where a record's history starts again (create,
-- restore), for vault notes, and in the records written before this.
ALTER TABLE changes ADD COLUMN patch TEXT;
ALTER TABLE changes ADD COLUMN prior TEXT;
