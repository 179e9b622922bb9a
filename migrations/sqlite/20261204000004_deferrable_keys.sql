-- On PostgreSQL, the newest tables' foreign keys become deferrable; SQLite
-- defers every key of an import already (`PRAGMA defer_foreign_keys`).
SELECT 1;
