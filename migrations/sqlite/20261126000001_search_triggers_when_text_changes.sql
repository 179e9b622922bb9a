-- The full-text rows of pages and entries are rebuilt only when the text
-- they are made of changes. Updates write every column, so `UPDATE OF`
-- alone fired on each of them: publishing a post, moving a page or hiding
-- a section re-indexed the whole text (a 2 KB post's body for a status
-- change) and, for sections, marked the page's vectors stale.

DROP TRIGGER pages_fts_update;
CREATE TRIGGER pages_fts_update AFTER UPDATE OF name, slug, meta ON pages
WHEN old.name IS NOT new.name OR old.slug IS NOT new.slug OR old.meta IS NOT new.meta
BEGIN
    DELETE FROM pages_fts WHERE rowid = old.rowid;
    INSERT INTO pages_fts (rowid, name, slug, meta, sections)
        SELECT doc_rowid, name, slug, meta, sections FROM page_search_text WHERE id = new.id;
END;

DROP TRIGGER page_sections_fts_update;
CREATE TRIGGER page_sections_fts_update AFTER UPDATE OF content, archive_id, page_id ON page_sections
WHEN old.content IS NOT new.content OR old.archive_id IS NOT new.archive_id OR old.page_id IS NOT new.page_id
BEGIN
    DELETE FROM pages_fts WHERE rowid IN (SELECT rowid FROM pages WHERE id IN (old.page_id, new.page_id));
    INSERT INTO pages_fts (rowid, name, slug, meta, sections)
        SELECT doc_rowid, name, slug, meta, sections FROM page_search_text WHERE id IN (old.page_id, new.page_id);
    UPDATE embeddings SET version = 0 WHERE entity_id IN (old.page_id, new.page_id);
END;

DROP TRIGGER entries_fts_update;
CREATE TRIGGER entries_fts_update AFTER UPDATE OF title, excerpt, content, tags, category ON entries
WHEN old.title IS NOT new.title OR old.excerpt IS NOT new.excerpt OR old.content IS NOT new.content
    OR old.tags IS NOT new.tags OR old.category IS NOT new.category
BEGIN
    DELETE FROM entries_fts WHERE rowid = old.rowid;
    INSERT INTO entries_fts (rowid, title, excerpt, content, tags)
        SELECT doc_rowid, title, excerpt, content, tags FROM entry_search_text WHERE id = new.id;
END;
