-- The full-text rows of pages and entries are rebuilt once per transaction,
-- at its end, instead of by each write's triggers. FTS5 writes what it holds
-- to disk at every savepoint, and the writer runs each write of a group
-- commit in a savepoint of its own: indexing in the triggers made one
-- full-text segment per write, which later merges rewrote again and again.
-- The triggers now only note which documents changed; the store indexes
-- them (`search::index_pending`) before the transaction commits.

CREATE TABLE search_pending (
    kind TEXT NOT NULL,
    doc_rowid INTEGER NOT NULL,
    PRIMARY KEY (kind, doc_rowid)
) WITHOUT ROWID;

DROP TRIGGER pages_fts_insert;
CREATE TRIGGER pages_fts_insert AFTER INSERT ON pages BEGIN
    INSERT OR IGNORE INTO search_pending (kind, doc_rowid) VALUES ('page', new.rowid);
END;

DROP TRIGGER pages_fts_delete;
CREATE TRIGGER pages_fts_delete AFTER DELETE ON pages BEGIN
    INSERT OR IGNORE INTO search_pending (kind, doc_rowid) VALUES ('page', old.rowid);
END;

DROP TRIGGER pages_fts_update;
CREATE TRIGGER pages_fts_update AFTER UPDATE OF name, slug, meta ON pages
WHEN old.name IS NOT new.name OR old.slug IS NOT new.slug OR old.meta IS NOT new.meta
BEGIN
    INSERT OR IGNORE INTO search_pending (kind, doc_rowid) VALUES ('page', new.rowid);
END;

DROP TRIGGER page_sections_fts_insert;
CREATE TRIGGER page_sections_fts_insert AFTER INSERT ON page_sections BEGIN
    INSERT OR IGNORE INTO search_pending (kind, doc_rowid) SELECT 'page', rowid FROM pages WHERE id = new.page_id;
    UPDATE pages SET text_version = text_version + 1 WHERE id = new.page_id;
END;

DROP TRIGGER page_sections_fts_update;
CREATE TRIGGER page_sections_fts_update AFTER UPDATE OF content, archive_id, page_id ON page_sections
WHEN old.content IS NOT new.content OR old.archive_id IS NOT new.archive_id OR old.page_id IS NOT new.page_id
BEGIN
    INSERT OR IGNORE INTO search_pending (kind, doc_rowid)
        SELECT 'page', rowid FROM pages WHERE id IN (old.page_id, new.page_id);
    UPDATE pages SET text_version = text_version + 1 WHERE id IN (old.page_id, new.page_id);
END;

DROP TRIGGER page_sections_fts_delete;
CREATE TRIGGER page_sections_fts_delete AFTER DELETE ON page_sections BEGIN
    INSERT OR IGNORE INTO search_pending (kind, doc_rowid) SELECT 'page', rowid FROM pages WHERE id = old.page_id;
    UPDATE pages SET text_version = text_version + 1 WHERE id = old.page_id;
END;

DROP TRIGGER entries_fts_insert;
CREATE TRIGGER entries_fts_insert AFTER INSERT ON entries BEGIN
    INSERT OR IGNORE INTO search_pending (kind, doc_rowid) VALUES ('entry', new.rowid);
END;

DROP TRIGGER entries_fts_delete;
CREATE TRIGGER entries_fts_delete AFTER DELETE ON entries BEGIN
    INSERT OR IGNORE INTO search_pending (kind, doc_rowid) VALUES ('entry', old.rowid);
END;

DROP TRIGGER entries_fts_update;
CREATE TRIGGER entries_fts_update AFTER UPDATE OF title, excerpt, content, tags, category ON entries
WHEN old.title IS NOT new.title OR old.excerpt IS NOT new.excerpt OR old.content IS NOT new.content
    OR old.tags IS NOT new.tags OR old.category IS NOT new.category
BEGIN
    INSERT OR IGNORE INTO search_pending (kind, doc_rowid) VALUES ('entry', new.rowid);
END;
