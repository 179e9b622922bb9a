-- Full-text search of translations (decision 0050), each in its own
-- language: a German translation is found by "Haus" when it says "Häuser".
-- FTS5 has only an English stemmer (porter), so the store stems a
-- translation's words itself with its locale's Snowball stemmer
-- (`search::index_pending`) and indexes the stems; a query is stemmed the
-- same way. The table is contentless: its rows are the translations' by
-- rowid. Only translations of pages and entries get a row; archived ones
-- keep theirs and are left out by the queries, as records are.
CREATE VIRTUAL TABLE translations_fts USING fts5(
    title, slug, summary, body,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER translations_fts_insert AFTER INSERT ON translations BEGIN
    INSERT OR IGNORE INTO search_pending (kind, doc_rowid) VALUES ('translation', new.rowid);
END;

CREATE TRIGGER translations_fts_update AFTER UPDATE OF fields, slug, locale, record_kind ON translations
WHEN old.fields IS NOT new.fields OR old.slug IS NOT new.slug OR old.locale IS NOT new.locale
    OR old.record_kind IS NOT new.record_kind
BEGIN
    INSERT OR IGNORE INTO search_pending (kind, doc_rowid) VALUES ('translation', new.rowid);
END;

CREATE TRIGGER translations_fts_delete AFTER DELETE ON translations BEGIN
    INSERT OR IGNORE INTO search_pending (kind, doc_rowid) VALUES ('translation', old.rowid);
END;

-- The translations already written are indexed when the store opens.
INSERT OR IGNORE INTO search_pending (kind, doc_rowid) SELECT 'translation', rowid FROM translations;
