-- A translation's fields stored once (decision 0050, "Storage"): a
-- translation's create logs it whole, so its working row keeps only the
-- number of that change (`fields_from`) and an empty `fields`, and its
-- published copy copies both; the store reads the fields from the change
-- while `fields` is empty. A later write of the fields keeps them in the
-- row again. The translations written before keep theirs.
ALTER TABLE translations ADD COLUMN fields_from BIGINT;
ALTER TABLE published_translations ADD COLUMN fields_from BIGINT;

-- The words indexed are those of the fields wherever they are kept.
CREATE OR REPLACE FUNCTION index_translation() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    fields TEXT;
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM translations_fts WHERE id = OLD.id;
        RETURN OLD;
    END IF;
    IF NEW.record_kind NOT IN ('page', 'entry') THEN
        DELETE FROM translations_fts WHERE id = NEW.id;
        RETURN NEW;
    END IF;
    fields := NEW.fields;
    IF fields = '' THEN
        fields := (SELECT (c.after::json -> 'fields')::text FROM changes c WHERE c.id = NEW.fields_from);
    END IF;
    INSERT INTO translations_fts (id, words) VALUES (NEW.id, translation_words(NEW.record_kind, NEW.locale, fields))
    ON CONFLICT (id) DO UPDATE SET words = excluded.words;
    RETURN NEW;
END $$;

-- A create inserts its row with `fields` empty, then names its change.
DROP TRIGGER translations_search_update ON translations;
CREATE TRIGGER translations_search_update
    AFTER UPDATE OF fields, fields_from, slug, locale, record_kind ON translations FOR EACH ROW
    WHEN (old.fields IS DISTINCT FROM new.fields OR old.fields_from IS DISTINCT FROM new.fields_from
        OR old.slug IS DISTINCT FROM new.slug OR old.locale IS DISTINCT FROM new.locale
        OR old.record_kind IS DISTINCT FROM new.record_kind)
    EXECUTE FUNCTION index_translation();
