-- A page's searchable text includes its sections', but a section's edit
-- does not change the page's version. Section triggers used to mark the
-- page's vector stale (version 0), which an embedding in flight then wrote
-- over with the version it read, and which a page never embedded had no row
-- to hold. Instead each change of a section's text counts on the page
-- (`text_version`); the text's version is the page's version plus that
-- count, which only grows, and a vector records the one it was made of.

ALTER TABLE pages ADD COLUMN text_version INTEGER NOT NULL DEFAULT 0;

DROP VIEW page_search_text;
CREATE VIEW page_search_text AS
SELECT p.rowid AS doc_rowid, p.id, p.site_id, p.env, p.version + p.text_version AS version, p.archive_id,
    p.name AS name,
    p.slug AS slug,
    coalesce((SELECT group_concat(t.value, ' ') FROM json_tree(p.meta) t WHERE t.type = 'text'), '') AS meta,
    coalesce((SELECT group_concat(t.value, ' ')
              FROM page_sections s, json_tree(s.content) t
              WHERE s.page_id = p.id AND s.archive_id IS NULL AND t.type = 'text'), '') AS sections
FROM pages p;

DROP TRIGGER page_sections_fts_insert;
CREATE TRIGGER page_sections_fts_insert AFTER INSERT ON page_sections BEGIN
    DELETE FROM pages_fts WHERE rowid = (SELECT rowid FROM pages WHERE id = new.page_id);
    INSERT INTO pages_fts (rowid, name, slug, meta, sections)
        SELECT doc_rowid, name, slug, meta, sections FROM page_search_text WHERE id = new.page_id;
    UPDATE pages SET text_version = text_version + 1 WHERE id = new.page_id;
END;

DROP TRIGGER page_sections_fts_update;
CREATE TRIGGER page_sections_fts_update AFTER UPDATE OF content, archive_id, page_id ON page_sections
WHEN old.content IS NOT new.content OR old.archive_id IS NOT new.archive_id OR old.page_id IS NOT new.page_id
BEGIN
    DELETE FROM pages_fts WHERE rowid IN (SELECT rowid FROM pages WHERE id IN (old.page_id, new.page_id));
    INSERT INTO pages_fts (rowid, name, slug, meta, sections)
        SELECT doc_rowid, name, slug, meta, sections FROM page_search_text WHERE id IN (old.page_id, new.page_id);
    UPDATE pages SET text_version = text_version + 1 WHERE id IN (old.page_id, new.page_id);
END;

DROP TRIGGER page_sections_fts_delete;
CREATE TRIGGER page_sections_fts_delete AFTER DELETE ON page_sections BEGIN
    DELETE FROM pages_fts WHERE rowid = (SELECT rowid FROM pages WHERE id = old.page_id);
    INSERT INTO pages_fts (rowid, name, slug, meta, sections)
        SELECT doc_rowid, name, slug, meta, sections FROM page_search_text WHERE id = old.page_id;
    UPDATE pages SET text_version = text_version + 1 WHERE id = old.page_id;
END;
