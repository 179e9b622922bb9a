-- As for pages and entries: an image's full-text row is rebuilt only when
-- its text changes, not on every update (processing writes status,
-- variants and dimensions; publishing writes no text).
DROP TRIGGER images_fts_update;
CREATE TRIGGER images_fts_update AFTER UPDATE OF filename, alt, description, tags, categories ON images
WHEN old.filename IS NOT new.filename OR old.alt IS NOT new.alt OR old.description IS NOT new.description
    OR old.tags IS NOT new.tags OR old.categories IS NOT new.categories
BEGIN
    INSERT INTO images_fts (images_fts, rowid, filename, alt, description, tags, categories)
    VALUES ('delete', old.rowid, old.filename, old.alt, old.description, old.tags, old.categories);
    INSERT INTO images_fts (rowid, filename, alt, description, tags, categories)
    VALUES (new.rowid, new.filename, new.alt, new.description, new.tags, new.categories);
END;
