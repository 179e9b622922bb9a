-- Search of pages (with their sections) and entries (posts included), the
-- same way images are searched: full text (FTS5, Porter stemming, BM25) kept
-- current by triggers, and vectors made by the background sweep.
--
-- What a record is searched by is said once, in a view: its full-text row
-- and the text its vector is made of both come from it. The full-text
-- tables are contentless (the text is not stored twice); rows are replaced
-- by rowid. Archived records keep their rows and are left out by the
-- queries (`archive_id IS NULL`), as images are.

-- A page: its name, slug, the text values of its meta and of its live
-- sections' content.
CREATE VIEW page_search_text AS
SELECT p.rowid AS doc_rowid, p.id, p.site_id, p.env, p.version, p.archive_id,
    p.name AS name,
    p.slug AS slug,
    coalesce((SELECT group_concat(t.value, ' ') FROM json_tree(p.meta) t WHERE t.type = 'text'), '') AS meta,
    coalesce((SELECT group_concat(t.value, ' ')
              FROM page_sections s, json_tree(s.content) t
              WHERE s.page_id = p.id AND s.archive_id IS NULL AND t.type = 'text'), '') AS sections
FROM pages p;

-- An entry: title, excerpt, the text values of its content, tags and category.
CREATE VIEW entry_search_text AS
SELECT e.rowid AS doc_rowid, e.id, e.site_id, e.env, e.collection_id, e.version, e.archive_id,
    e.title AS title,
    coalesce(e.excerpt, '') AS excerpt,
    coalesce((SELECT group_concat(t.value, ' ') FROM json_tree(e.content) t WHERE t.type = 'text'), '') AS content,
    trim(coalesce((SELECT group_concat(t.value, ' ') FROM json_each(e.tags) t), '') || ' ' || coalesce(e.category, ''))
        AS tags
FROM entries e;

CREATE VIRTUAL TABLE pages_fts USING fts5(
    name, slug, meta, sections,
    content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE VIRTUAL TABLE entries_fts USING fts5(
    title, excerpt, content, tags,
    content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER pages_fts_insert AFTER INSERT ON pages BEGIN
    INSERT INTO pages_fts (rowid, name, slug, meta, sections)
        SELECT doc_rowid, name, slug, meta, sections FROM page_search_text WHERE id = new.id;
END;

CREATE TRIGGER pages_fts_update AFTER UPDATE OF name, slug, meta ON pages BEGIN
    DELETE FROM pages_fts WHERE rowid = old.rowid;
    INSERT INTO pages_fts (rowid, name, slug, meta, sections)
        SELECT doc_rowid, name, slug, meta, sections FROM page_search_text WHERE id = new.id;
END;

CREATE TRIGGER pages_fts_delete AFTER DELETE ON pages BEGIN
    DELETE FROM pages_fts WHERE rowid = old.rowid;
END;

-- A section's change rewrites its page's row and marks the page's vectors
-- stale (version 0 is older than any record's), so the sweep embeds the
-- page again: a section's text is part of its page's.
CREATE TRIGGER page_sections_fts_insert AFTER INSERT ON page_sections BEGIN
    DELETE FROM pages_fts WHERE rowid = (SELECT rowid FROM pages WHERE id = new.page_id);
    INSERT INTO pages_fts (rowid, name, slug, meta, sections)
        SELECT doc_rowid, name, slug, meta, sections FROM page_search_text WHERE id = new.page_id;
    UPDATE embeddings SET version = 0 WHERE entity_id = new.page_id;
END;

CREATE TRIGGER page_sections_fts_update AFTER UPDATE OF content, archive_id, page_id ON page_sections BEGIN
    DELETE FROM pages_fts WHERE rowid IN (SELECT rowid FROM pages WHERE id IN (old.page_id, new.page_id));
    INSERT INTO pages_fts (rowid, name, slug, meta, sections)
        SELECT doc_rowid, name, slug, meta, sections FROM page_search_text WHERE id IN (old.page_id, new.page_id);
    UPDATE embeddings SET version = 0 WHERE entity_id IN (old.page_id, new.page_id);
END;

CREATE TRIGGER page_sections_fts_delete AFTER DELETE ON page_sections BEGIN
    DELETE FROM pages_fts WHERE rowid = (SELECT rowid FROM pages WHERE id = old.page_id);
    INSERT INTO pages_fts (rowid, name, slug, meta, sections)
        SELECT doc_rowid, name, slug, meta, sections FROM page_search_text WHERE id = old.page_id;
    UPDATE embeddings SET version = 0 WHERE entity_id = old.page_id;
END;

CREATE TRIGGER entries_fts_insert AFTER INSERT ON entries BEGIN
    INSERT INTO entries_fts (rowid, title, excerpt, content, tags)
        SELECT doc_rowid, title, excerpt, content, tags FROM entry_search_text WHERE id = new.id;
END;

CREATE TRIGGER entries_fts_update AFTER UPDATE OF title, excerpt, content, tags, category ON entries BEGIN
    DELETE FROM entries_fts WHERE rowid = old.rowid;
    INSERT INTO entries_fts (rowid, title, excerpt, content, tags)
        SELECT doc_rowid, title, excerpt, content, tags FROM entry_search_text WHERE id = new.id;
END;

CREATE TRIGGER entries_fts_delete AFTER DELETE ON entries BEGIN
    DELETE FROM entries_fts WHERE rowid = old.rowid;
END;

INSERT INTO pages_fts (rowid, name, slug, meta, sections)
    SELECT doc_rowid, name, slug, meta, sections FROM page_search_text;
INSERT INTO entries_fts (rowid, title, excerpt, content, tags)
    SELECT doc_rowid, title, excerpt, content, tags FROM entry_search_text;
