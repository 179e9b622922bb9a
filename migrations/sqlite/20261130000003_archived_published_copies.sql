-- Published documents archived before their published copies existed get
-- an archived published copy too, so that restoring one brings back what
-- the public site showed (restoring clears the archive on both copies).

INSERT INTO published_pages (id, site_id, env, name, slug, parent_id, is_protected, meta, indexing, sort_order, status, version, created_at, updated_at, archive_id)
SELECT id, site_id, env, name, slug, parent_id, is_protected, meta, indexing, sort_order, status, version, created_at, updated_at, archive_id
FROM pages p WHERE archive_id IS NOT NULL AND status = 'published'
AND NOT EXISTS (SELECT 1 FROM published_pages c WHERE c.id = p.id);

INSERT INTO published_page_sections (id, site_id, env, page_id, template_key, content, sort_order, status, hidden, version, created_at, updated_at, archive_id)
SELECT s.id, s.site_id, s.env, s.page_id, s.template_key, s.content, s.sort_order, s.status, s.hidden, s.version, s.created_at, s.updated_at, s.archive_id
FROM page_sections s JOIN published_pages p ON p.id = s.page_id AND p.site_id = s.site_id AND p.env = s.env
WHERE p.archive_id IS NOT NULL AND s.archive_id = p.archive_id
AND NOT EXISTS (SELECT 1 FROM published_page_sections c WHERE c.id = s.id);

INSERT INTO published_entries (id, site_id, env, collection_id, slug, title, content, status, author, category, tags, excerpt, featured_image, published_at, version, created_at, updated_at, archive_id)
SELECT id, site_id, env, collection_id, slug, title, content, status, author, category, tags, excerpt, featured_image, published_at, version, created_at, updated_at, archive_id
FROM entries e WHERE archive_id IS NOT NULL AND status = 'published'
AND NOT EXISTS (SELECT 1 FROM published_entries c WHERE c.id = e.id);

INSERT INTO published_navigations (id, site_id, env, key, name, max_items, version, created_at, updated_at, archive_id)
SELECT id, site_id, env, key, name, max_items, version, created_at, updated_at, archive_id
FROM navigations n WHERE archive_id IS NOT NULL
AND NOT EXISTS (SELECT 1 FROM published_navigations c WHERE c.id = n.id);

INSERT INTO published_nav_items (id, site_id, env, navigation_id, parent_id, label, target_type, target_id, url, sort_order, visible, version, created_at, updated_at, archive_id)
SELECT i.id, i.site_id, i.env, i.navigation_id, i.parent_id, i.label, i.target_type, i.target_id, i.url, i.sort_order, i.visible, i.version, i.created_at, i.updated_at, i.archive_id
FROM nav_items i JOIN published_navigations n ON n.id = i.navigation_id AND n.site_id = i.site_id AND n.env = i.env
WHERE n.archive_id IS NOT NULL AND i.archive_id = n.archive_id
AND NOT EXISTS (SELECT 1 FROM published_nav_items c WHERE c.id = i.id);
