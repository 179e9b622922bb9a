-- A post's featured image is its one image. Before, a post also had a
-- cover in its content, which editors kept equal to the featured image by
-- hand. A post whose cover is set and whose featured image is not takes
-- the cover's URL as its featured image, in the drafts and in the
-- published copies; nothing else changes (a cover that differs from a
-- featured image stays in the content, and the back-office writes the
-- cover from the featured image on the post's next save).
UPDATE entries
SET featured_image = CASE jsonb_typeof(content::jsonb -> 'cover')
        WHEN 'string' THEN content::jsonb ->> 'cover'
        ELSE content::jsonb -> 'cover' ->> 'url' END
WHERE featured_image IS NULL
  AND collection_id IN (SELECT id FROM collections WHERE kind = 'posts')
  AND COALESCE(CASE jsonb_typeof(content::jsonb -> 'cover')
        WHEN 'string' THEN content::jsonb ->> 'cover'
        WHEN 'object' THEN content::jsonb -> 'cover' ->> 'url' END, '') <> '';

UPDATE published_entries
SET featured_image = CASE jsonb_typeof(content::jsonb -> 'cover')
        WHEN 'string' THEN content::jsonb ->> 'cover'
        ELSE content::jsonb -> 'cover' ->> 'url' END
WHERE featured_image IS NULL
  AND collection_id IN (SELECT id FROM collections WHERE kind = 'posts')
  AND COALESCE(CASE jsonb_typeof(content::jsonb -> 'cover')
        WHEN 'string' THEN content::jsonb ->> 'cover'
        WHEN 'object' THEN content::jsonb -> 'cover' ->> 'url' END, '') <> '';
