-- A record's history without an index of the change log by record. That
-- index (`changes_entity`) took a key per change spread over the whole
-- index, so every write of a random record dirtied one of its leaves.
-- Instead each change points at the record's change before it (`prev`,
-- any action) and at its newest revision before it (`prev_revision`,
-- publications left out), and the record's row names its newest change
-- (`last_change`), in the page its write dirties anyway; vault notes, which
-- have no row, keep theirs in `change_heads`. A history is a walk of
-- lookups by id (`log::walk`, `changes::filtered`).

ALTER TABLE changes ADD COLUMN prev BIGINT;
ALTER TABLE changes ADD COLUMN prev_revision BIGINT;

UPDATE changes SET
    prev = (SELECT MAX(c.id) FROM changes c
            WHERE c.site_id = changes.site_id AND c.env = changes.env AND c.entity = changes.entity
              AND c.entity_id = changes.entity_id AND c.id < changes.id),
    prev_revision = (SELECT MAX(c.id) FROM changes c
                     WHERE c.site_id = changes.site_id AND c.env = changes.env AND c.entity = changes.entity
                       AND c.entity_id = changes.entity_id AND c.id < changes.id
                       AND c.action NOT IN ('publish', 'unpublish'));

ALTER TABLE pages ADD COLUMN last_change BIGINT;
ALTER TABLE page_sections ADD COLUMN last_change BIGINT;
ALTER TABLE section_templates ADD COLUMN last_change BIGINT;
ALTER TABLE collections ADD COLUMN last_change BIGINT;
ALTER TABLE entries ADD COLUMN last_change BIGINT;
ALTER TABLE images ADD COLUMN last_change BIGINT;
ALTER TABLE navigations ADD COLUMN last_change BIGINT;
ALTER TABLE nav_items ADD COLUMN last_change BIGINT;
ALTER TABLE agents ADD COLUMN last_change BIGINT;
ALTER TABLE translations ADD COLUMN last_change BIGINT;
ALTER TABLE contexts ADD COLUMN last_change BIGINT;
ALTER TABLE workspaces ADD COLUMN last_change BIGINT;

UPDATE pages SET last_change = (SELECT MAX(c.id) FROM changes c
    WHERE c.site_id = pages.site_id AND c.env = pages.env AND c.entity = 'page' AND c.entity_id = pages.id);
UPDATE page_sections SET last_change = (SELECT MAX(c.id) FROM changes c
    WHERE c.site_id = page_sections.site_id AND c.env = page_sections.env AND c.entity = 'section'
      AND c.entity_id = page_sections.id);
UPDATE section_templates SET last_change = (SELECT MAX(c.id) FROM changes c
    WHERE c.site_id = section_templates.site_id AND c.env = section_templates.env AND c.entity = 'sectionTemplate'
      AND c.entity_id = section_templates.id);
UPDATE collections SET last_change = (SELECT MAX(c.id) FROM changes c
    WHERE c.site_id = collections.site_id AND c.env = collections.env AND c.entity = 'collection'
      AND c.entity_id = collections.id);
UPDATE entries SET last_change = (SELECT MAX(c.id) FROM changes c
    WHERE c.site_id = entries.site_id AND c.env = entries.env AND c.entity = 'entry' AND c.entity_id = entries.id);
UPDATE images SET last_change = (SELECT MAX(c.id) FROM changes c
    WHERE c.site_id = images.site_id AND c.env = images.env AND c.entity = 'image' AND c.entity_id = images.id);
UPDATE navigations SET last_change = (SELECT MAX(c.id) FROM changes c
    WHERE c.site_id = navigations.site_id AND c.env = navigations.env AND c.entity = 'navigation'
      AND c.entity_id = navigations.id);
UPDATE nav_items SET last_change = (SELECT MAX(c.id) FROM changes c
    WHERE c.site_id = nav_items.site_id AND c.env = nav_items.env AND c.entity = 'navItem' AND c.entity_id = nav_items.id);
UPDATE agents SET last_change = (SELECT MAX(c.id) FROM changes c
    WHERE c.site_id = agents.site_id AND c.env = agents.env AND c.entity = 'agent' AND c.entity_id = agents.id);
UPDATE translations SET last_change = (SELECT MAX(c.id) FROM changes c
    WHERE c.site_id = translations.site_id AND c.env = translations.env AND c.entity = 'translation'
      AND c.entity_id = translations.id);
UPDATE contexts SET last_change = (SELECT MAX(c.id) FROM changes c
    WHERE c.site_id = contexts.site_id AND c.env = contexts.env AND c.entity = 'context' AND c.entity_id = contexts.id);
UPDATE workspaces SET last_change = (SELECT MAX(c.id) FROM changes c
    WHERE c.site_id = workspaces.site_id AND c.env = workspaces.env AND c.entity = 'workspace'
      AND c.entity_id = workspaces.id);

CREATE TABLE change_heads (
    site_id     TEXT NOT NULL,
    env         TEXT NOT NULL,
    entity      TEXT NOT NULL,
    entity_id   TEXT NOT NULL,
    last_change BIGINT NOT NULL,
    PRIMARY KEY (site_id, env, entity, entity_id)
);
INSERT INTO change_heads (site_id, env, entity, entity_id, last_change)
    SELECT site_id, env, entity, entity_id, MAX(id) FROM changes WHERE entity = 'note'
    GROUP BY site_id, env, entity, entity_id;

DROP INDEX changes_entity;
