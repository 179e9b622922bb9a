//! Each kind of record described once: its [`Entity`] (table, unique key,
//! references, what archiving takes along), its columns, and the few rules
//! of its own that need the database (content against a template or a
//! collection's fields, a navigation's room, what a nav item points at).
//! Rules on values alone are quire-core's (`rules.rs`).

use crate::db::{self, Conn};
use crate::record::{Child, Document, Entity, Parent, Published, Record, Unique, by_key, columns, find, load_live};
use crate::{Result, Scope, StoreError};
use chrono::{DateTime, Utc};
use quire_core::FieldError;
use quire_core::fields::validate_content;
use quire_core::model::*;
use serde_json::Value;

/// The parts of [`Record`] every kind spells the same way.
macro_rules! stamped {
    ($label:expr) => {
        fn id(&self) -> &str {
            &self.id
        }
        fn label(&self) -> String {
            $label(self)
        }
        fn stamp(&mut self) -> (&mut i64, &mut DateTime<Utc>) {
            (&mut self.version, &mut self.updated_at)
        }
    };
}

// ---------------------------------------------------------------- pages

impl Record for Page {
    const ENTITY: Entity = Entity {
        positioned: true,
        unique: Some(Unique { column: "slug", within: None }),
        parents: &[Parent { column: "parent_id", field: "parentId", kind: EntityKind::Page, role: "parent page" }],
        children: &[
            Child { kind: EntityKind::Section, column: "page_id", top_level: false },
            Child { kind: EntityKind::Page, column: "parent_id", top_level: false },
            Child { kind: EntityKind::Translation, column: "record_id", top_level: false },
        ],
        published: Some(Published {
            table: "published_pages",
            document: Document::Own { withdrawn: Some("unpublished") },
        }),
        ..Entity::new(EntityKind::Page, "pages", "page")
    };
    stamped!(|p: &Self| p.slug.clone());
    columns!(Page { name, slug, parent_id, is_protected, meta: json, indexing, sort_order, status: wire });
}

// ---------------------------------------------------------------- section templates

impl Record for SectionTemplate {
    const ENTITY: Entity = Entity {
        unique: Some(Unique { column: "key", within: None }),
        ..Entity::new(EntityKind::SectionTemplate, "section_templates", "section template")
    };
    stamped!(|t: &Self| t.key.clone());
    columns!(SectionTemplate { key, name, description, fields: json });

    /// Live sections use a template by key: it stays until none does.
    fn check_archive(&self, conn: &Conn, scope: &Scope) -> Result<()> {
        let used: i64 = db::query_scalar(
            "SELECT COUNT(*) FROM page_sections WHERE site_id = ?1 AND env = ?2 AND template_key = ?3 AND archive_id IS NULL",
        )
        .bind_scope(scope)
        .bind(&self.key)
        .fetch_one(conn)?;
        if used > 0 {
            return Err(StoreError::conflict(
                None,
                format!("template {} is used by {used} live sections; archive or change those first", self.key),
            ));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- page sections

impl Record for PageSection {
    const ENTITY: Entity = Entity {
        positioned: true,
        parents: &[Parent { column: "page_id", field: "pageId", kind: EntityKind::Page, role: "page" }],
        small: false,
        published: Some(Published {
            table: "published_page_sections",
            document: Document::Of { column: "page_id", kind: EntityKind::Page },
        }),
        ..Entity::new(EntityKind::Section, "page_sections", "section")
    };
    stamped!(|s: &Self| match s.content.get("heading").and_then(Value::as_str) {
        Some(h) => format!("{}: {h}", s.template_key),
        None => s.template_key.clone(),
    });
    columns!(PageSection { page_id, template_key, content: json, sort_order, status: wire, hidden });

    /// Its content against its template's fields.
    fn check_more(&self, conn: &Conn, scope: &Scope, before: Option<&Self>) -> Result<Vec<FieldError>> {
        // Content kept under the same template was checked when it was written.
        if before.is_some_and(|b| b.template_key == self.template_key && b.content == self.content) {
            return Ok(Vec::new());
        }
        let Some(template) = by_key::<SectionTemplate>(conn, scope, &self.template_key)? else {
            let keys: Vec<String> = db::query_scalar(
                "SELECT key FROM section_templates WHERE site_id = ?1 AND env = ?2 AND archive_id IS NULL ORDER BY key",
            )
            .bind_scope(scope)
            .fetch_all(conn)?;
            return Err(StoreError::invalid(
                "templateKey",
                format!("\"{}\" is not one of {}", self.template_key, keys.join(", ")),
            ));
        };
        Ok(validate_content("content", &template.fields, &self.content))
    }

    fn check_restore(&self, conn: &Conn, scope: &Scope) -> Result<()> {
        if by_key::<SectionTemplate>(conn, scope, &self.template_key)?.is_none() {
            return Err(StoreError::conflict(
                None,
                format!("a section uses template {}, which is archived; restore the template first", self.template_key),
            ));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- collections

impl Record for Collection {
    const ENTITY: Entity = Entity {
        unique: Some(Unique { column: "slug", within: None }),
        children: &[Child { kind: EntityKind::Entry, column: "collection_id", top_level: false }],
        ..Entity::new(EntityKind::Collection, "collections", "collection")
    };
    stamped!(|c: &Self| c.slug.clone());
    columns!(Collection { slug, name, kind: wire, fields: json });
}

// ---------------------------------------------------------------- entries

impl Record for Entry {
    const ENTITY: Entity = Entity {
        unique: Some(Unique { column: "slug", within: Some("collection_id") }),
        parents: &[Parent {
            column: "collection_id",
            field: "collectionId",
            kind: EntityKind::Collection,
            role: "collection",
        }],
        children: &[Child { kind: EntityKind::Translation, column: "record_id", top_level: false }],
        small: false,
        published: Some(Published { table: "published_entries", document: Document::Own { withdrawn: Some("draft") } }),
        ..Entity::new(EntityKind::Entry, "entries", "entry")
    };
    stamped!(|e: &Self| e.slug.clone());
    columns!(Entry {
        collection_id,
        slug,
        title,
        content: json,
        status: wire,
        author,
        category,
        tags: json,
        excerpt,
        featured_image,
        published_at
    });

    /// Its content against the collection's fields.
    fn check_more(&self, conn: &Conn, scope: &Scope, before: Option<&Self>) -> Result<Vec<FieldError>> {
        // Content already stored in this collection was checked when it was written.
        if before.is_some_and(|b| b.collection_id == self.collection_id && b.content == self.content) {
            return Ok(Vec::new());
        }
        let collection: Collection = find(conn, scope, &self.collection_id)?;
        Ok(validate_content("content", &collection.fields, &self.content))
    }
}

// ---------------------------------------------------------------- translations

impl Record for Translation {
    const ENTITY: Entity = Entity {
        unique: Some(Unique { column: "slug", within: Some("slug_scope") }),
        small: false,
        published: Some(Published {
            table: "published_translations",
            document: Document::Own { withdrawn: Some("unpublished") },
        }),
        // A translation's fields are most of its bytes: stored once, in its
        // create's snapshot, while its rows are as it was created.
        kept_in_log: Some("fields"),
        ..Entity::new(EntityKind::Translation, "translations", "translation")
    };
    stamped!(|t: &Self| format!("{} {} ({})", t.record_kind, t.record_id, t.locale));
    columns!(Translation {
        record_kind: wire,
        record_id,
        locale,
        slug,
        slug_scope,
        fields: json,
        source_hash,
        status: wire
    });

    /// Its document is live, its locale one of the site's others, and its
    /// fields are the document's localised ones (see [`Translation`]).
    fn check_more(&self, conn: &Conn, scope: &Scope, before: Option<&Self>) -> Result<Vec<FieldError>> {
        if before.is_some_and(|b| b.fields == self.fields && b.slug_scope == self.slug_scope) {
            return Ok(Vec::new());
        }
        translation_errors(conn, scope, self)
    }
}

/// The slug scope of a translation into `locale` of `document` (see
/// [`Translation::slug_scope`]).
pub(crate) fn slug_scope(kind: EntityKind, collection: Option<&str>, locale: &str) -> String {
    match collection {
        Some(collection) => format!("{kind}:{collection}:{locale}"),
        None => format!("{kind}:{locale}"),
    }
}

/// What is wrong with translation `t` beyond its own values: its locale is
/// not one of the site's others, or a field is not a localised one of its
/// document (or its sections', items'), or a value breaks its field's rules.
fn translation_errors(conn: &Conn, scope: &Scope, t: &Translation) -> Result<Vec<FieldError>> {
    let default: Option<i64> =
        db::query_scalar("SELECT is_default FROM site_locales WHERE site_id = ?1 AND tag = ?2 AND archived_at IS NULL")
            .bind(&scope.site_id)
            .bind(&t.locale)
            .fetch_optional(conn)?;
    match default {
        None => {
            let tags: Vec<String> = db::query_scalar(
                "SELECT tag FROM site_locales WHERE site_id = ?1 AND archived_at IS NULL ORDER BY position, tag",
            )
            .bind(&scope.site_id)
            .fetch_all(conn)?;
            return Err(StoreError::invalid(
                "locale",
                format!("{} is not one of the site's locales ({})", t.locale, tags.join(", ")),
            ));
        }
        Some(1) => {
            return Err(StoreError::invalid(
                "locale",
                format!("{} is the site's default locale: its values are the record's own", t.locale),
            ));
        }
        Some(_) => {}
    }
    let Value::Object(fields) = &t.fields else { return Ok(Vec::new()) };
    let mut errors = Vec::new();
    let (allowed, collection): (&[&str], Option<String>) = match t.record_kind {
        EntityKind::Page => {
            load_live::<Page>(conn, scope, &t.record_id)?.ok_or_else(|| StoreError::not_found("page", &t.record_id))?;
            (&["name", "slug", "meta", "sections"], None)
        }
        EntityKind::Entry => {
            let entry = load_live::<Entry>(conn, scope, &t.record_id)?
                .ok_or_else(|| StoreError::not_found("entry", &t.record_id))?;
            (&["title", "slug", "excerpt", "content"], Some(entry.collection_id))
        }
        EntityKind::Navigation => {
            load_live::<Navigation>(conn, scope, &t.record_id)?
                .ok_or_else(|| StoreError::not_found("navigation", &t.record_id))?;
            (&["items"], None)
        }
        _ => return Ok(Vec::new()),
    };
    if t.slug_scope != slug_scope(t.record_kind, collection.as_deref(), &t.locale) {
        return Err(StoreError::invalid("slugScope", "does not match the translated record and locale"));
    }
    for key in fields.keys().filter(|k| !allowed.contains(&k.as_str())) {
        errors.push(FieldError::new(
            format!("fields.{key}"),
            format!("not a localised field of a {} (localised: {})", t.record_kind, allowed.join(", ")),
        ));
    }
    if fields.get("slug").and_then(Value::as_str) != t.slug.as_deref() {
        errors.push(FieldError::new("fields.slug", "must be the translation's slug"));
    }
    if let Some(meta) = fields.get("meta")
        && !meta.is_object()
    {
        errors.push(FieldError::new("fields.meta", "must be an object"));
    }
    let localized = |defs: &[quire_core::fields::FieldDef]| -> Vec<quire_core::fields::FieldDef> {
        defs.iter()
            .filter(|f| f.localized)
            .map(|f| quire_core::fields::FieldDef { required: false, ..f.clone() })
            .collect()
    };
    let parts = |key: &str| -> Option<&serde_json::Map<String, Value>> { fields.get(key).and_then(Value::as_object) };
    for key in ["sections", "items", "content"] {
        if fields.get(key).is_some_and(|v| !v.is_object()) {
            errors.push(FieldError::new(format!("fields.{key}"), "must be an object"));
        }
    }
    for (id, content) in parts("sections").into_iter().flatten() {
        let here = format!("fields.sections.{id}");
        match load_live::<PageSection>(conn, scope, id)? {
            Some(section) if section.page_id == t.record_id => {
                let template = by_key::<SectionTemplate>(conn, scope, &section.template_key)?;
                let defs = localized(template.as_ref().map_or(&[][..], |t| &t.fields));
                if defs.is_empty() {
                    errors.push(FieldError::new(
                        here,
                        format!("template {} has no localised fields", section.template_key),
                    ));
                } else {
                    errors.extend(validate_content(&here, &defs, content));
                }
            }
            // A promotion brings what its source holds: values of sections archived there since.
            _ if conn.promoting() => {}
            _ => errors.push(FieldError::new(here, "not a live section of this page")),
        }
    }
    if let (Some(content), Some(collection)) = (fields.get("content"), &collection) {
        let collection: Collection = find(conn, scope, collection)?;
        let defs = localized(&collection.fields);
        if defs.is_empty() {
            errors.push(FieldError::new(
                "fields.content",
                format!("collection {} has no localised fields", collection.slug),
            ));
        } else {
            errors.extend(validate_content("fields.content", &defs, content));
        }
    }
    for (id, item) in parts("items").into_iter().flatten() {
        let here = format!("fields.items.{id}");
        match load_live::<NavItem>(conn, scope, id)? {
            Some(found) if found.navigation_id == t.record_id => match item.get("label") {
                Some(Value::String(label)) if item.as_object().is_some_and(|o| o.len() == 1) => {
                    errors.extend(quire_core::text::check_line(&format!("{here}.label"), label, 120).err());
                }
                _ => errors.push(FieldError::new(here, "must be { \"label\": text }")),
            },
            _ if conn.promoting() => {}
            _ => errors.push(FieldError::new(here, "not a live item of this navigation")),
        }
    }
    Ok(errors)
}

// ---------------------------------------------------------------- images

impl Record for Image {
    const ENTITY: Entity = Entity::new(EntityKind::Image, "images", "image");
    stamped!(|i: &Self| i.filename.clone());
    columns!(Image {
        url,
        filename,
        mime,
        width,
        height,
        bytes,
        content_hash,
        alt,
        description,
        tags: json,
        categories: json,
        status: wire,
        source: wire,
        attribution: json_opt,
        variants: json,
        color,
        error,
        generated: json
    });
}

// ---------------------------------------------------------------- navigations

impl Record for Navigation {
    const ENTITY: Entity = Entity {
        unique: Some(Unique { column: "key", within: None }),
        children: &[
            Child { kind: EntityKind::NavItem, column: "navigation_id", top_level: true },
            Child { kind: EntityKind::Translation, column: "record_id", top_level: false },
        ],
        published: Some(Published { table: "published_navigations", document: Document::Own { withdrawn: None } }),
        ..Entity::new(EntityKind::Navigation, "navigations", "navigation")
    };
    stamped!(|n: &Self| n.key.clone());
    columns!(Navigation { key, name, max_items });
}

/// Refuses a new top-level item (other than `item_id`) in a full navigation.
fn top_level_room(conn: &Conn, scope: &Scope, navigation_id: &str, item_id: &str) -> Result<()> {
    // Replicas adding items at once count one after the other: the items'
    // tree lock (taken before any row, as every change of an item does).
    crate::record::lock_trees(conn, scope)?;
    let row: Option<(String, Option<i64>)> =
        db::query_as("SELECT key, max_items FROM navigations WHERE id = ?1 AND site_id = ?2 AND env = ?3")
            .bind(navigation_id)
            .bind_scope(scope)
            .fetch_optional(conn)?;
    let Some((key, Some(max))) = row else { return Ok(()) };
    let count: i64 = db::query_scalar(
        "SELECT COUNT(*) FROM nav_items WHERE navigation_id = ?1 AND site_id = ?3 AND env = ?4 AND parent_id IS NULL
         AND archive_id IS NULL AND id <> ?2",
    )
    .bind(navigation_id)
    .bind(item_id)
    .bind_scope(scope)
    .fetch_one(conn)?;
    if count >= max {
        return Err(StoreError::conflict(
            None,
            format!("navigation {key} is full: it holds at most {max} top-level items"),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------- nav items

impl Record for NavItem {
    const ENTITY: Entity = Entity {
        positioned: true,
        parents: &[
            Parent { column: "navigation_id", field: "navigationId", kind: EntityKind::Navigation, role: "navigation" },
            Parent { column: "parent_id", field: "parentId", kind: EntityKind::NavItem, role: "parent item" },
        ],
        children: &[Child { kind: EntityKind::NavItem, column: "parent_id", top_level: false }],
        published: Some(Published {
            table: "published_nav_items",
            document: Document::Of { column: "navigation_id", kind: EntityKind::Navigation },
        }),
        ..Entity::new(EntityKind::NavItem, "nav_items", "nav item")
    };
    stamped!(|n: &Self| n.label.clone());
    columns!(NavItem { navigation_id, parent_id, label, target_type: wire, target_id, url, sort_order, visible });

    /// Room at the top level, a target that exists, a parent in the same
    /// navigation.
    fn check_more(&self, conn: &Conn, scope: &Scope, before: Option<&Self>) -> Result<Vec<FieldError>> {
        let same_navigation = before.is_some_and(|b| b.navigation_id == self.navigation_id);
        let same_parent = before.is_some_and(|b| b.parent_id == self.parent_id);
        if self.parent_id.is_none() && !(same_parent && same_navigation) {
            top_level_room(conn, scope, &self.navigation_id, &self.id)?;
        }
        let same_target = before.is_some_and(|b| b.target_id == self.target_id && b.target_type == self.target_type);
        // A promotion brings what its source holds, whose target may have
        // been archived there since.
        if let Some(target) = self.target_id.as_ref().filter(|_| !same_target && !conn.promoting()) {
            let found = match self.target_type {
                NavTargetType::Page => load_live::<Page>(conn, scope, target)?.is_some(),
                NavTargetType::Entry => load_live::<Entry>(conn, scope, target)?.is_some(),
                NavTargetType::Media => load_live::<Image>(conn, scope, target)?.is_some(),
                NavTargetType::Url | NavTargetType::Placeholder => true,
            };
            if !found {
                let noun = match self.target_type {
                    NavTargetType::Media => "image",
                    other => other.as_str(),
                };
                return Err(StoreError::invalid("targetId", format!("{noun} {target} does not exist")));
            }
        }
        if let Some(parent) = self.parent_id.as_ref().filter(|_| !(same_parent && same_navigation)) {
            let parent: NavItem = find(conn, scope, parent)?;
            if parent.navigation_id != self.navigation_id {
                return Err(StoreError::invalid("parentId", "the parent item belongs to another navigation"));
            }
        }
        Ok(Vec::new())
    }

    fn check_restore(&self, conn: &Conn, scope: &Scope) -> Result<()> {
        match self.parent_id {
            Some(_) => Ok(()),
            None => top_level_room(conn, scope, &self.navigation_id, &self.id),
        }
    }
}

// ---------------------------------------------------------------- agents

impl Record for Agent {
    const ENTITY: Entity = Entity {
        archived: false,
        unique: Some(Unique { column: "alias", within: None }),
        ..Entity::new(EntityKind::Agent, "agents", "agent")
    };
    stamped!(|a: &Self| a.alias.clone());
    columns!(Agent {
        alias,
        name,
        description,
        profile,
        system_prompt,
        tools: json,
        pinned: json,
        allowed_groups: json,
        approval_policy: wire,
        write_mode: wire,
        enabled,
        contexts: json
    });

    /// The contexts it gains must be live ones; those it had stay, even if
    /// one was archived since (the prompt leaves a missing one out).
    fn check_more(&self, conn: &Conn, scope: &Scope, before: Option<&Self>) -> Result<Vec<FieldError>> {
        let mut errors = Vec::new();
        for (i, key) in self.contexts.iter().enumerate() {
            let had = before.is_some_and(|b| b.contexts.contains(key));
            if !had && by_key::<Context>(conn, scope, key)?.is_none() {
                errors.push(FieldError::new(format!("contexts[{i}]"), format!("no context {key}")));
            }
        }
        Ok(errors)
    }
}

// ---------------------------------------------------------------- contexts and workspaces

impl Record for Context {
    const ENTITY: Entity = Entity {
        unique: Some(Unique { column: "key", within: None }),
        small: false,
        ..Entity::new(EntityKind::Context, "contexts", "context")
    };
    stamped!(|c: &Self| c.key.clone());
    columns!(Context { key, name, description, body });
}

impl Record for Workspace {
    const ENTITY: Entity = Entity {
        unique: Some(Unique { column: "name", within: None }),
        small: false,
        ..Entity::new(EntityKind::Workspace, "workspaces", "workspace")
    };
    stamped!(|w: &Self| w.name.clone());
    columns!(Workspace { name, goal, summary, records: json, notes: json, session_id, saved_by });
}

/// A new image record of `input`, in `status`: no variants yet, its type
/// taken from its file name when not given.
pub(crate) fn new_image(input: quire_core::input::NewImage, status: ImageStatus) -> Image {
    let now = Utc::now();
    let mime = input.mime.unwrap_or_else(|| mime_from_name(&input.filename).to_string());
    Image {
        id: crate::log::new_id(),
        url: input.url,
        filename: input.filename,
        mime,
        width: input.width,
        height: input.height,
        bytes: input.bytes,
        content_hash: input.content_hash,
        alt: input.alt,
        description: input.description,
        tags: input.tags.unwrap_or_default(),
        categories: input.categories.unwrap_or_default(),
        status,
        source: input.source.unwrap_or(ImageSource::Upload),
        attribution: input.attribution,
        variants: serde_json::json!({}),
        color: None,
        error: None,
        generated: Vec::new(),
        version: 1,
        created_at: now,
        updated_at: now,
    }
}

fn mime_from_name(name: &str) -> &'static str {
    let lower = name.to_ascii_lowercase();
    match lower.rsplit('.').next() {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("webp") => "image/webp",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("avif") => "image/avif",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use crate::db::{self, Conn};
    use crate::record::{Record, entity_of, with_record};
    use crate::{Result, Scope};
    use quire_core::model::EntityKind;
    use std::collections::BTreeSet;

    /// Columns the database keeps itself (by triggers, or as PostgreSQL's
    /// stand-in for SQLite's implicit rowid) and the store never writes as
    /// part of a record; `*` is every table, whose rows name their newest
    /// change (`last_change`, written by the change log, `log.rs`).
    const MAINTAINED: &[(&str, &str)] = &[
        ("pages", "text_version"),
        ("pages", "rowid"),
        ("entries", "rowid"),
        ("images", "rowid"),
        ("*", "last_change"),
    ];

    /// The columns of `table`, as the schema has them.
    fn schema_columns(conn: &Conn, table: &str) -> Result<BTreeSet<String>> {
        let sql = if conn.is_postgres() {
            "SELECT column_name::TEXT FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?1"
        } else {
            "SELECT name FROM pragma_table_info(?1)"
        };
        db::query_scalar(sql).bind(table).fetch_all(conn).map(BTreeSet::from_iter)
    }

    /// Reads every row of `table`, `T`'s table or the table of its
    /// published copies, in the scope, and checks that each decodes and
    /// encodes back to the values it was read from, and that the
    /// description names every column the table has.
    fn read_back<T: Record>(conn: &Conn, scope: &Scope, table: &str) -> Result<usize> {
        let all = crate::record::select_all(&T::ENTITY, conn, table);
        let rows = db::query(format!("SELECT {all} FROM {table} WHERE site_id = ?1 AND env = ?2"))
            .bind_scope(scope)
            .fetch_all(conn)?;
        let mut described = BTreeSet::from(["site_id".to_string(), "env".to_string()]);
        described.extend(T::ENTITY.kept_in_log.map(|c| format!("{c}_from")));
        let stored = schema_columns(conn, table)?;
        let maintained = MAINTAINED.iter().filter(|(t, c)| (*t == table || *t == "*") && stored.contains(*c));
        described.extend(maintained.map(|(_, c)| c.to_string()));
        if T::ENTITY.archived {
            described.insert("archive_id".into());
        }
        for row in &rows {
            let record = T::from_row(row)?;
            let columns = record.columns();
            let names: Vec<&str> = columns.iter().map(|(name, _)| *name).collect();
            assert_eq!(names, T::COLUMNS, "the column names of {table} in the order of its columns");
            for (column, value) in columns {
                let stored: db::Value = row.try_get(column)?;
                assert_eq!(stored, value, "{table}.{column} of {} does not read back as written", record.id());
                described.insert(column.to_string());
            }
        }
        if !rows.is_empty() {
            assert_eq!(described, stored, "the columns of {table} as described and as stored");
        }
        Ok(rows.len())
    }

    /// Checks `T`'s description against its tables (see [`read_back`]), and
    /// answers how many rows its working table holds in the scope.
    fn round_trip<T: Record>(conn: &Conn, scope: &Scope) -> Result<usize> {
        let e = &T::ENTITY;
        assert_eq!(crate::log::head_table(e.kind), Some(e.table), "the change log names the table of {}", e.kind);
        let rows = read_back::<T>(conn, scope, e.table)?;
        if let Some(published) = &e.published {
            let copies = read_back::<T>(conn, scope, published.table)?;
            assert!(copies > 0, "the demo site has published copies in {}", published.table);
            assert!(copies <= rows, "{} holds more rows than {}", published.table, e.table);
        }
        for column in
            e.parents.iter().map(|p| p.column).chain(e.unique.iter().flat_map(|u| [Some(u.column), u.within]).flatten())
        {
            assert!(schema_columns(conn, e.table)?.contains(column), "{} has no column {column}", e.table);
        }
        for child in e.children {
            let of = entity_of(child.kind).expect("children are database records");
            assert!(
                schema_columns(conn, of.table)?.contains(child.column),
                "{} has no column {}",
                of.table,
                child.column
            );
            assert!(of.archived, "{} are archived with their parent, so they have an archive_id", of.table);
        }
        Ok(rows)
    }

    #[tokio::test]
    async fn every_kind_is_described_as_its_table_stores_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::testing::open(dir.path()).await.unwrap();
        let scope = crate::seed::seed_demo(&store, &dir.path().join("uploads")).await.unwrap().scope.unwrap();
        let counts = store
            .db
            .read(move |c| {
                let mut counts = Vec::new();
                for kind in EntityKind::ALL.iter().copied() {
                    let n = with_record!(kind, |T| round_trip::<T>(c, &scope)?, else continue);
                    counts.push((kind, n));
                }
                Ok(counts)
            })
            .await
            .unwrap();
        // The demo site holds records of every kind, so each description met real rows.
        assert_eq!(counts.len(), EntityKind::ALL.len() - 1, "every kind but notes is a database record");
        for (kind, n) in counts {
            assert!(n > 0, "the demo site has no {kind} to check the description against");
        }
    }
}
