-- Full-text search of translations (decision 0050), each in its own
-- language: a German translation is found by "Haus" when it says "Häuser".
-- Each language the store stems (the Snowball stemmers of rust-stemmers,
-- which SQLite's side uses) has a configuration here made of PostgreSQL's
-- Snowball dictionary of that language, common words kept as `quire`
-- keeps them; `search_language` names a locale's (`simple` for a language
-- without one). A translation of a page or an entry is indexed by a
-- trigger as it changes, as images are; archived ones keep their rows and
-- are left out by the queries.
DO $$
DECLARE
    lang TEXT;
BEGIN
    FOREACH lang IN ARRAY ARRAY['arabic', 'danish', 'dutch', 'english', 'finnish', 'french', 'german', 'greek',
        'hungarian', 'italian', 'norwegian', 'portuguese', 'romanian', 'russian', 'spanish', 'swedish', 'tamil',
        'turkish']
    LOOP
        EXECUTE format('CREATE TEXT SEARCH DICTIONARY quire_stem_%s (TEMPLATE = snowball, Language = %s)',
            lang, lang);
        EXECUTE format('CREATE TEXT SEARCH CONFIGURATION quire_%s (COPY = simple)', lang);
        EXECUTE format('ALTER TEXT SEARCH CONFIGURATION quire_%s ALTER MAPPING FOR asciiword, asciihword, '
            'hword_asciipart, word, hword, hword_part WITH quire_stem_%s', lang, lang);
    END LOOP;
END $$;

-- The configuration of a locale's language (its first subtag).
CREATE FUNCTION search_language(locale TEXT) RETURNS regconfig LANGUAGE SQL IMMUTABLE SET search_path FROM CURRENT AS $$
    SELECT (CASE lower(split_part(locale, '-', 1))
        WHEN 'ar' THEN 'quire_arabic' WHEN 'da' THEN 'quire_danish' WHEN 'nl' THEN 'quire_dutch'
        WHEN 'en' THEN 'quire_english' WHEN 'fi' THEN 'quire_finnish' WHEN 'fr' THEN 'quire_french'
        WHEN 'de' THEN 'quire_german' WHEN 'el' THEN 'quire_greek' WHEN 'hu' THEN 'quire_hungarian'
        WHEN 'it' THEN 'quire_italian' WHEN 'no' THEN 'quire_norwegian' WHEN 'nb' THEN 'quire_norwegian'
        WHEN 'nn' THEN 'quire_norwegian' WHEN 'pt' THEN 'quire_portuguese' WHEN 'ro' THEN 'quire_romanian'
        WHEN 'ru' THEN 'quire_russian' WHEN 'es' THEN 'quire_spanish' WHEN 'sv' THEN 'quire_swedish'
        WHEN 'ta' THEN 'quire_tamil' WHEN 'tr' THEN 'quire_turkish'
        ELSE 'simple' END)::regconfig
$$;

CREATE TABLE translations_fts (
    id     TEXT PRIMARY KEY,
    words  tsvector NOT NULL
);
CREATE INDEX translations_fts_words ON translations_fts USING GIN (words);

-- A translation's words in its language, weighted as the records' are: its
-- name or title most, then a page's meta or an entry's excerpt, its slug,
-- and its sections' or content's text least. Words are split as
-- `search_words` splits them.
CREATE FUNCTION translation_words(kind TEXT, locale TEXT, fields TEXT) RETURNS tsvector LANGUAGE plpgsql IMMUTABLE
SET search_path FROM CURRENT AS $$
DECLARE
    f jsonb;
    cfg regconfig := search_language(locale);
BEGIN
    f := fields::jsonb;
    RETURN setweight(to_tsvector(cfg, regexp_replace(coalesce(f->>'name', f->>'title', ''), '[^[:alnum:]]+', ' ', 'g')), 'A')
        || setweight(to_tsvector(cfg, regexp_replace(CASE WHEN kind = 'page' THEN json_strings((f->'meta')::text)
            ELSE coalesce(f->>'excerpt', '') END, '[^[:alnum:]]+', ' ', 'g')), 'B')
        || setweight(to_tsvector(cfg, regexp_replace(coalesce(f->>'slug', ''), '[^[:alnum:]]+', ' ', 'g')), 'C')
        || setweight(to_tsvector(cfg, regexp_replace(json_strings(coalesce(f->'sections', f->'content')::text),
            '[^[:alnum:]]+', ' ', 'g')), 'D');
EXCEPTION WHEN untranslatable_character OR invalid_text_representation THEN
    RETURN ''::tsvector;
END $$;

CREATE FUNCTION index_translation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM translations_fts WHERE id = OLD.id;
        RETURN OLD;
    END IF;
    IF NEW.record_kind NOT IN ('page', 'entry') THEN
        DELETE FROM translations_fts WHERE id = NEW.id;
        RETURN NEW;
    END IF;
    INSERT INTO translations_fts (id, words) VALUES (NEW.id, translation_words(NEW.record_kind, NEW.locale, NEW.fields))
    ON CONFLICT (id) DO UPDATE SET words = excluded.words;
    RETURN NEW;
END $$;

CREATE TRIGGER translations_search AFTER INSERT OR DELETE ON translations FOR EACH ROW
    EXECUTE FUNCTION index_translation();
CREATE TRIGGER translations_search_update AFTER UPDATE OF fields, slug, locale, record_kind ON translations FOR EACH ROW
    WHEN (old.fields IS DISTINCT FROM new.fields OR old.slug IS DISTINCT FROM new.slug
        OR old.locale IS DISTINCT FROM new.locale OR old.record_kind IS DISTINCT FROM new.record_kind)
    EXECUTE FUNCTION index_translation();

INSERT INTO translations_fts (id, words)
    SELECT id, translation_words(record_kind, locale, fields) FROM translations WHERE record_kind IN ('page', 'entry');
