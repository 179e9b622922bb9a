//! [`Record`] for each kind of content: row mapping, SQL and the rules that
//! need the database (references, uniqueness, content against templates).

use crate::db::{self, Conn, Row};
use crate::record::{Record, enum_col, json_col, json_opt, load_live, to_json};
use crate::{Result, Scope, StoreError};
use chrono::{DateTime, Utc};
use quire_core::fields::{check_definitions, is_href, validate_content};
use quire_core::model::*;
use quire_core::slug::check_slug;
use quire_core::{FieldError, ValidationErrors};
use serde_json::Value;

fn text_rule(errors: &mut Vec<FieldError>, field: &str, value: &str, max: usize) {
    errors.extend(quire_core::text::check_line(field, value, max).err());
}

/// An optional value: `multiline` for excerpts and descriptions.
fn opt_text_rule(errors: &mut Vec<FieldError>, field: &str, value: &Option<String>, max: usize, multiline: bool) {
    if let Some(v) = value {
        let checked = if multiline {
            quire_core::text::check_text(field, v, max)
        } else if v.is_empty() {
            Ok(())
        } else {
            quire_core::text::check_line(field, v, max)
        };
        errors.extend(checked.err());
    }
}

fn upload_url_rule(errors: &mut Vec<FieldError>, field: &str, value: &str) {
    if !quire_core::fields::is_upload_url(value) {
        errors.push(FieldError::new(field, format!("\"{value}\" is not a relative /uploads/... URL")));
    }
}

fn exists(conn: &Conn, sql: &'static str, args: &[&str]) -> Result<bool> {
    let mut q = db::query_scalar::<i64>(sql);
    for a in args {
        q = q.bind(*a);
    }
    Ok(q.fetch_optional(conn)?.is_some())
}

// ---------------------------------------------------------------- pages

impl Record for Page {
    const KIND: EntityKind = EntityKind::Page;
    const TABLE: &'static str = "pages";
    const SELECT_LIVE: &'static str =
        "SELECT * FROM pages WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL";

    fn id(&self) -> &str {
        &self.id
    }
    fn label(&self) -> String {
        self.slug.clone()
    }
    fn stamp(&mut self) -> (&mut i64, &mut DateTime<Utc>) {
        (&mut self.version, &mut self.updated_at)
    }
    fn from_row(row: &Row) -> Result<Self> {
        Ok(Page {
            id: row.try_get("id")?,
            name: row.try_get("name")?,
            slug: row.try_get("slug")?,
            parent_id: row.try_get("parent_id")?,
            is_protected: row.try_get("is_protected")?,
            meta: json_col(row, "meta")?,
            indexing: row.try_get("indexing")?,
            sort_order: row.try_get("sort_order")?,
            status: enum_col(row, "status", PublishStatus::parse)?,
            version: row.try_get("version")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        })
    }
    fn columns(&self) -> Vec<(&'static str, db::Value)> {
        vec![
            ("id", (&self.id).into()),
            ("name", (&self.name).into()),
            ("slug", (&self.slug).into()),
            ("parent_id", (&self.parent_id).into()),
            ("is_protected", self.is_protected.into()),
            ("meta", to_json(&self.meta).into()),
            ("indexing", self.indexing.into()),
            ("sort_order", self.sort_order.into()),
            ("status", self.status.as_str().into()),
            ("version", self.version.into()),
            ("created_at", self.created_at.into()),
            ("updated_at", self.updated_at.into()),
        ]
    }
    fn check(&self, conn: &Conn, scope: &Scope, before: Option<&Self>) -> Result<()> {
        let mut errors = Vec::new();
        text_rule(&mut errors, "name", &self.name, 200);
        if let Err(e) = check_slug("slug", &self.slug) {
            errors.push(e);
        }
        match &self.meta {
            Value::Object(map) => {
                for (key, max) in [("title", 120usize), ("description", 320)] {
                    match map.get(key) {
                        None | Some(Value::Null) => {}
                        Some(Value::String(s)) if s.chars().count() <= max => {}
                        Some(Value::String(_)) => {
                            errors.push(FieldError::new(format!("meta.{key}"), format!("at most {max} characters")))
                        }
                        Some(_) => errors.push(FieldError::new(format!("meta.{key}"), "must be text")),
                    }
                }
            }
            _ => errors.push(FieldError::new("meta", "must be an object")),
        }
        ValidationErrors::check(errors)?;
        let same_parent = before.is_some_and(|b| b.parent_id == self.parent_id);
        if let Some(parent) = self.parent_id.as_ref().filter(|_| !same_parent) {
            if parent == &self.id {
                return Err(StoreError::invalid("parentId", "a page cannot be its own parent"));
            }
            // Walk up from the parent: reaching this page again would make a cycle.
            let mut cursor = Some(parent.clone());
            let mut depth = 0;
            while let Some(id) = cursor {
                let Some(p) = load_live::<Page>(conn, scope, &id)? else {
                    return Err(StoreError::invalid("parentId", format!("page {id} does not exist")));
                };
                if p.parent_id.as_deref() == Some(self.id.as_str()) || depth > 64 {
                    return Err(StoreError::invalid("parentId", "moving the page there would make a cycle"));
                }
                cursor = p.parent_id;
                depth += 1;
            }
        }
        if before.is_none_or(|b| b.slug != self.slug)
            && exists(
                conn,
                "SELECT 1 FROM pages WHERE site_id = ?1 AND env = ?2 AND slug = ?3 AND id <> ?4 AND archive_id IS NULL",
                &[&scope.site_id, &scope.env, &self.slug, &self.id],
            )?
        {
            return Err(StoreError::conflict(
                Some("slug"),
                format!("slug \"{}\" is already used by another page", self.slug),
            ));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- section templates

impl Record for SectionTemplate {
    const KIND: EntityKind = EntityKind::SectionTemplate;
    const TABLE: &'static str = "section_templates";
    const SELECT_LIVE: &'static str =
        "SELECT * FROM section_templates WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL";

    fn id(&self) -> &str {
        &self.id
    }
    fn label(&self) -> String {
        self.key.clone()
    }
    fn stamp(&mut self) -> (&mut i64, &mut DateTime<Utc>) {
        (&mut self.version, &mut self.updated_at)
    }
    fn from_row(row: &Row) -> Result<Self> {
        Ok(SectionTemplate {
            id: row.try_get("id")?,
            key: row.try_get("key")?,
            name: row.try_get("name")?,
            description: row.try_get("description")?,
            fields: json_col(row, "fields")?,
            version: row.try_get("version")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        })
    }
    fn columns(&self) -> Vec<(&'static str, db::Value)> {
        vec![
            ("id", (&self.id).into()),
            ("key", (&self.key).into()),
            ("name", (&self.name).into()),
            ("description", (&self.description).into()),
            ("fields", to_json(&self.fields).into()),
            ("version", self.version.into()),
            ("created_at", self.created_at.into()),
            ("updated_at", self.updated_at.into()),
        ]
    }
    fn check(&self, conn: &Conn, scope: &Scope, before: Option<&Self>) -> Result<()> {
        let mut errors = Vec::new();
        if let Err(e) = check_slug("key", &self.key) {
            errors.push(e);
        }
        text_rule(&mut errors, "name", &self.name, 120);
        if self.description.chars().count() > 500 {
            errors.push(FieldError::new("description", "at most 500 characters"));
        }
        if self.fields.is_empty() {
            errors.push(FieldError::new("fields", "at least one field"));
        }
        errors.extend(check_definitions("fields", &self.fields));
        ValidationErrors::check(errors)?;
        if before.is_none_or(|b| b.key != self.key)
            && exists(
                conn,
                "SELECT 1 FROM section_templates WHERE site_id = ?1 AND env = ?2 AND key = ?3 AND id <> ?4 AND archive_id IS NULL",
                &[&scope.site_id, &scope.env, &self.key, &self.id],
            )?
        {
            return Err(StoreError::conflict(Some("key"), format!("template key \"{}\" is already in use", self.key)));
        }
        Ok(())
    }
}

/// The live template with `key`, if any.
pub(crate) fn template_by_key(conn: &Conn, scope: &Scope, key: &str) -> Result<Option<SectionTemplate>> {
    let row = db::query(
        "SELECT * FROM section_templates WHERE site_id = ?1 AND env = ?2 AND key = ?3 AND archive_id IS NULL",
    )
    .bind(&scope.site_id)
    .bind(&scope.env)
    .bind(key)
    .fetch_optional(conn)?;
    row.as_ref().map(SectionTemplate::from_row).transpose()
}

// ---------------------------------------------------------------- page sections

impl Record for PageSection {
    const KIND: EntityKind = EntityKind::Section;
    const TABLE: &'static str = "page_sections";
    const SELECT_LIVE: &'static str =
        "SELECT * FROM page_sections WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL";

    fn id(&self) -> &str {
        &self.id
    }
    fn label(&self) -> String {
        match self.content.get("heading").and_then(Value::as_str) {
            Some(h) => format!("{}: {h}", self.template_key),
            None => self.template_key.clone(),
        }
    }
    fn stamp(&mut self) -> (&mut i64, &mut DateTime<Utc>) {
        (&mut self.version, &mut self.updated_at)
    }
    fn from_row(row: &Row) -> Result<Self> {
        Ok(PageSection {
            id: row.try_get("id")?,
            page_id: row.try_get("page_id")?,
            template_key: row.try_get("template_key")?,
            content: json_col(row, "content")?,
            sort_order: row.try_get("sort_order")?,
            status: enum_col(row, "status", PublishStatus::parse)?,
            hidden: row.try_get("hidden")?,
            version: row.try_get("version")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        })
    }
    fn columns(&self) -> Vec<(&'static str, db::Value)> {
        vec![
            ("id", (&self.id).into()),
            ("page_id", (&self.page_id).into()),
            ("template_key", (&self.template_key).into()),
            ("content", to_json(&self.content).into()),
            ("sort_order", self.sort_order.into()),
            ("status", self.status.as_str().into()),
            ("hidden", self.hidden.into()),
            ("version", self.version.into()),
            ("created_at", self.created_at.into()),
            ("updated_at", self.updated_at.into()),
        ]
    }
    fn check(&self, conn: &Conn, scope: &Scope, before: Option<&Self>) -> Result<()> {
        // A live section's page is live (archiving a page takes its sections).
        let same_page = before.is_some_and(|b| b.page_id == self.page_id);
        if !same_page && load_live::<Page>(conn, scope, &self.page_id)?.is_none() {
            return Err(StoreError::invalid("pageId", format!("page {} does not exist", self.page_id)));
        }
        // Content kept under the same template was checked when it was written.
        if before.is_some_and(|b| b.template_key == self.template_key && b.content == self.content) {
            return Ok(());
        }
        let Some(template) = template_by_key(conn, scope, &self.template_key)? else {
            let keys: Vec<String> = db::query_scalar(
                "SELECT key FROM section_templates WHERE site_id = ?1 AND env = ?2 AND archive_id IS NULL ORDER BY key",
            )
            .bind(&scope.site_id)
            .bind(&scope.env)
            .fetch_all(conn)?;
            return Err(StoreError::invalid(
                "templateKey",
                format!("\"{}\" is not one of {}", self.template_key, keys.join(", ")),
            ));
        };
        ValidationErrors::check(validate_content("content", &template.fields, &self.content))?;
        Ok(())
    }
}

// ---------------------------------------------------------------- collections

impl Record for Collection {
    const KIND: EntityKind = EntityKind::Collection;
    const TABLE: &'static str = "collections";
    const SELECT_LIVE: &'static str =
        "SELECT * FROM collections WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL";

    fn id(&self) -> &str {
        &self.id
    }
    fn label(&self) -> String {
        self.slug.clone()
    }
    fn stamp(&mut self) -> (&mut i64, &mut DateTime<Utc>) {
        (&mut self.version, &mut self.updated_at)
    }
    fn from_row(row: &Row) -> Result<Self> {
        Ok(Collection {
            id: row.try_get("id")?,
            slug: row.try_get("slug")?,
            name: row.try_get("name")?,
            kind: enum_col(row, "kind", CollectionKind::parse)?,
            fields: json_col(row, "fields")?,
            version: row.try_get("version")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        })
    }
    fn columns(&self) -> Vec<(&'static str, db::Value)> {
        vec![
            ("id", (&self.id).into()),
            ("slug", (&self.slug).into()),
            ("name", (&self.name).into()),
            ("kind", self.kind.as_str().into()),
            ("fields", to_json(&self.fields).into()),
            ("version", self.version.into()),
            ("created_at", self.created_at.into()),
            ("updated_at", self.updated_at.into()),
        ]
    }
    fn check(&self, conn: &Conn, scope: &Scope, before: Option<&Self>) -> Result<()> {
        let mut errors = Vec::new();
        if let Err(e) = check_slug("slug", &self.slug) {
            errors.push(e);
        }
        text_rule(&mut errors, "name", &self.name, 120);
        errors.extend(check_definitions("fields", &self.fields));
        ValidationErrors::check(errors)?;
        if before.is_none_or(|b| b.slug != self.slug)
            && exists(
                conn,
                "SELECT 1 FROM collections WHERE site_id = ?1 AND env = ?2 AND slug = ?3 AND id <> ?4 AND archive_id IS NULL",
                &[&scope.site_id, &scope.env, &self.slug, &self.id],
            )?
        {
            return Err(StoreError::conflict(
                Some("slug"),
                format!("collection slug \"{}\" is already in use", self.slug),
            ));
        }
        Ok(())
    }
}

/// The live collection with `slug`, if any.
pub(crate) fn collection_by_slug(conn: &Conn, scope: &Scope, slug: &str) -> Result<Option<Collection>> {
    let row =
        db::query("SELECT * FROM collections WHERE site_id = ?1 AND env = ?2 AND slug = ?3 AND archive_id IS NULL")
            .bind(&scope.site_id)
            .bind(&scope.env)
            .bind(slug)
            .fetch_optional(conn)?;
    row.as_ref().map(Collection::from_row).transpose()
}

// ---------------------------------------------------------------- entries

impl Record for Entry {
    const KIND: EntityKind = EntityKind::Entry;
    const TABLE: &'static str = "entries";
    const SELECT_LIVE: &'static str =
        "SELECT * FROM entries WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL";

    fn id(&self) -> &str {
        &self.id
    }
    fn label(&self) -> String {
        self.slug.clone()
    }
    fn stamp(&mut self) -> (&mut i64, &mut DateTime<Utc>) {
        (&mut self.version, &mut self.updated_at)
    }
    fn from_row(row: &Row) -> Result<Self> {
        Ok(Entry {
            id: row.try_get("id")?,
            collection_id: row.try_get("collection_id")?,
            slug: row.try_get("slug")?,
            title: row.try_get("title")?,
            content: json_col(row, "content")?,
            status: enum_col(row, "status", EntryStatus::parse)?,
            author: row.try_get("author")?,
            category: row.try_get("category")?,
            tags: json_col(row, "tags")?,
            excerpt: row.try_get("excerpt")?,
            featured_image: row.try_get("featured_image")?,
            published_at: row.try_get("published_at")?,
            version: row.try_get("version")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        })
    }
    fn columns(&self) -> Vec<(&'static str, db::Value)> {
        vec![
            ("id", (&self.id).into()),
            ("collection_id", (&self.collection_id).into()),
            ("slug", (&self.slug).into()),
            ("title", (&self.title).into()),
            ("content", to_json(&self.content).into()),
            ("status", self.status.as_str().into()),
            ("author", (&self.author).into()),
            ("category", (&self.category).into()),
            ("tags", to_json(&self.tags).into()),
            ("excerpt", (&self.excerpt).into()),
            ("featured_image", (&self.featured_image).into()),
            ("published_at", self.published_at.into()),
            ("version", self.version.into()),
            ("created_at", self.created_at.into()),
            ("updated_at", self.updated_at.into()),
        ]
    }
    fn check(&self, conn: &Conn, scope: &Scope, before: Option<&Self>) -> Result<()> {
        // Content already stored in this collection was checked when it was
        // written (and a live entry's collection is live: archiving a
        // collection takes its entries along), so an update that leaves both
        // alone needs neither the query nor the walk.
        let content_kept = before.is_some_and(|b| b.collection_id == self.collection_id && b.content == self.content);
        let collection = if content_kept {
            None
        } else {
            let Some(collection) = load_live::<Collection>(conn, scope, &self.collection_id)? else {
                return Err(StoreError::invalid(
                    "collectionId",
                    format!("collection {} does not exist", self.collection_id),
                ));
            };
            Some(collection)
        };
        let mut errors = Vec::new();
        if let Err(e) = check_slug("slug", &self.slug) {
            errors.push(e);
        }
        text_rule(&mut errors, "title", &self.title, 300);
        opt_text_rule(&mut errors, "author", &self.author, 120, false);
        opt_text_rule(&mut errors, "category", &self.category, 80, false);
        opt_text_rule(&mut errors, "excerpt", &self.excerpt, 1000, true);
        if self.tags.len() > 30 {
            errors.push(FieldError::new("tags", "at most 30 tags"));
        }
        for (i, tag) in self.tags.iter().enumerate() {
            text_rule(&mut errors, &format!("tags.{i}"), tag, 60);
        }
        if let Some(url) = &self.featured_image {
            upload_url_rule(&mut errors, "featuredImage", url);
        }
        if let Some(collection) = &collection {
            errors.extend(validate_content("content", &collection.fields, &self.content));
        }
        ValidationErrors::check(errors)?;
        if before.is_none_or(|b| b.slug != self.slug || b.collection_id != self.collection_id)
            && exists(
                conn,
                "SELECT 1 FROM entries WHERE collection_id = ?1 AND slug = ?2 AND id <> ?3 AND archive_id IS NULL",
                &[&self.collection_id, &self.slug, &self.id],
            )?
        {
            let name = match collection {
                Some(c) => c.slug,
                None => load_live::<Collection>(conn, scope, &self.collection_id)?
                    .map_or_else(|| self.collection_id.clone(), |c| c.slug),
            };
            return Err(StoreError::conflict(
                Some("slug"),
                format!("slug \"{}\" is already used in collection {name}", self.slug),
            ));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- images

impl Record for Image {
    const KIND: EntityKind = EntityKind::Image;
    const TABLE: &'static str = "images";
    const SELECT_LIVE: &'static str =
        "SELECT * FROM images WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL";

    fn id(&self) -> &str {
        &self.id
    }
    fn label(&self) -> String {
        self.filename.clone()
    }
    fn stamp(&mut self) -> (&mut i64, &mut DateTime<Utc>) {
        (&mut self.version, &mut self.updated_at)
    }
    fn from_row(row: &Row) -> Result<Self> {
        Ok(Image {
            id: row.try_get("id")?,
            url: row.try_get("url")?,
            filename: row.try_get("filename")?,
            mime: row.try_get("mime")?,
            width: row.try_get("width")?,
            height: row.try_get("height")?,
            bytes: row.try_get("bytes")?,
            content_hash: row.try_get("content_hash")?,
            alt: row.try_get("alt")?,
            description: row.try_get("description")?,
            tags: json_col(row, "tags")?,
            categories: json_col(row, "categories")?,
            status: enum_col(row, "status", ImageStatus::parse)?,
            source: enum_col(row, "source", ImageSource::parse)?,
            attribution: json_opt(row, "attribution")?,
            variants: json_col(row, "variants")?,
            color: row.try_get("color")?,
            error: row.try_get("error")?,
            generated: json_col(row, "generated")?,
            version: row.try_get("version")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        })
    }
    fn columns(&self) -> Vec<(&'static str, db::Value)> {
        vec![
            ("id", (&self.id).into()),
            ("url", (&self.url).into()),
            ("filename", (&self.filename).into()),
            ("mime", (&self.mime).into()),
            ("width", self.width.into()),
            ("height", self.height.into()),
            ("bytes", self.bytes.into()),
            ("content_hash", (&self.content_hash).into()),
            ("alt", (&self.alt).into()),
            ("description", (&self.description).into()),
            ("tags", to_json(&self.tags).into()),
            ("categories", to_json(&self.categories).into()),
            ("status", self.status.as_str().into()),
            ("source", self.source.as_str().into()),
            ("attribution", self.attribution.as_ref().map(to_json).into()),
            ("variants", to_json(&self.variants).into()),
            ("version", self.version.into()),
            ("created_at", self.created_at.into()),
            ("updated_at", self.updated_at.into()),
            ("color", (&self.color).into()),
            ("error", (&self.error).into()),
            ("generated", to_json(&self.generated).into()),
        ]
    }
    fn check(&self, _conn: &Conn, _scope: &Scope, _before: Option<&Self>) -> Result<()> {
        let mut errors = Vec::new();
        upload_url_rule(&mut errors, "url", &self.url);
        text_rule(&mut errors, "filename", &self.filename, 255);
        text_rule(&mut errors, "mime", &self.mime, 100);
        if !self.mime.starts_with("image/") {
            errors.push(FieldError::new("mime", format!("\"{}\" is not an image type", self.mime)));
        }
        opt_text_rule(&mut errors, "alt", &self.alt, 300, false);
        opt_text_rule(&mut errors, "description", &self.description, 2000, true);
        for (field, value) in [("width", self.width), ("height", self.height), ("bytes", self.bytes)] {
            if value.is_some_and(|v| v < 0) {
                errors.push(FieldError::new(field, "must not be negative"));
            }
        }
        if self.attribution.as_ref().is_some_and(|a| !a.is_object()) {
            errors.push(FieldError::new("attribution", "must be an object"));
        }
        Ok(ValidationErrors::check(errors)?)
    }
}

// ---------------------------------------------------------------- navigations

impl Record for Navigation {
    const KIND: EntityKind = EntityKind::Navigation;
    const TABLE: &'static str = "navigations";
    const SELECT_LIVE: &'static str =
        "SELECT * FROM navigations WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL";

    fn id(&self) -> &str {
        &self.id
    }
    fn label(&self) -> String {
        self.key.clone()
    }
    fn stamp(&mut self) -> (&mut i64, &mut DateTime<Utc>) {
        (&mut self.version, &mut self.updated_at)
    }
    fn from_row(row: &Row) -> Result<Self> {
        Ok(Navigation {
            id: row.try_get("id")?,
            key: row.try_get("key")?,
            name: row.try_get("name")?,
            max_items: row.try_get("max_items")?,
            version: row.try_get("version")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        })
    }
    fn columns(&self) -> Vec<(&'static str, db::Value)> {
        vec![
            ("id", (&self.id).into()),
            ("key", (&self.key).into()),
            ("name", (&self.name).into()),
            ("max_items", self.max_items.into()),
            ("version", self.version.into()),
            ("created_at", self.created_at.into()),
            ("updated_at", self.updated_at.into()),
        ]
    }
    fn check(&self, conn: &Conn, scope: &Scope, before: Option<&Self>) -> Result<()> {
        let mut errors = Vec::new();
        if let Err(e) = check_slug("key", &self.key) {
            errors.push(e);
        }
        text_rule(&mut errors, "name", &self.name, 120);
        if self.max_items.is_some_and(|m| !(1..=100).contains(&m)) {
            errors.push(FieldError::new("maxItems", "between 1 and 100"));
        }
        ValidationErrors::check(errors)?;
        if before.is_none_or(|b| b.key != self.key)
            && exists(
                conn,
                "SELECT 1 FROM navigations WHERE site_id = ?1 AND env = ?2 AND key = ?3 AND id <> ?4 AND archive_id IS NULL",
                &[&scope.site_id, &scope.env, &self.key, &self.id],
            )?
        {
            return Err(StoreError::conflict(
                Some("key"),
                format!("navigation key \"{}\" is already in use", self.key),
            ));
        }
        Ok(())
    }
}

/// Refuses a new top-level item (other than `item_id`) in a full navigation.
pub(crate) fn top_level_room(conn: &Conn, navigation_id: &str, item_id: &str) -> Result<()> {
    let row: Option<(String, Option<i64>)> = db::query_as("SELECT key, max_items FROM navigations WHERE id = ?1")
        .bind(navigation_id)
        .fetch_optional(conn)?;
    let Some((key, Some(max))) = row else { return Ok(()) };
    let count: i64 = db::query_scalar(
        "SELECT COUNT(*) FROM nav_items WHERE navigation_id = ?1 AND parent_id IS NULL AND archive_id IS NULL AND id <> ?2",
    )
    .bind(navigation_id)
    .bind(item_id)
    .fetch_one(conn)
    ?;
    if count >= max {
        return Err(StoreError::conflict(
            None,
            format!("navigation {key} is full: it holds at most {max} top-level items"),
        ));
    }
    Ok(())
}

/// The live navigation with `key`, if any.
pub(crate) fn navigation_by_key(conn: &Conn, scope: &Scope, key: &str) -> Result<Option<Navigation>> {
    let row =
        db::query("SELECT * FROM navigations WHERE site_id = ?1 AND env = ?2 AND key = ?3 AND archive_id IS NULL")
            .bind(&scope.site_id)
            .bind(&scope.env)
            .bind(key)
            .fetch_optional(conn)?;
    row.as_ref().map(Navigation::from_row).transpose()
}

// ---------------------------------------------------------------- nav items

impl Record for NavItem {
    const KIND: EntityKind = EntityKind::NavItem;
    const TABLE: &'static str = "nav_items";
    const SELECT_LIVE: &'static str =
        "SELECT * FROM nav_items WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL";

    fn id(&self) -> &str {
        &self.id
    }
    fn label(&self) -> String {
        self.label.clone()
    }
    fn stamp(&mut self) -> (&mut i64, &mut DateTime<Utc>) {
        (&mut self.version, &mut self.updated_at)
    }
    fn from_row(row: &Row) -> Result<Self> {
        Ok(NavItem {
            id: row.try_get("id")?,
            navigation_id: row.try_get("navigation_id")?,
            parent_id: row.try_get("parent_id")?,
            label: row.try_get("label")?,
            target_type: enum_col(row, "target_type", NavTargetType::parse)?,
            target_id: row.try_get("target_id")?,
            url: row.try_get("url")?,
            sort_order: row.try_get("sort_order")?,
            visible: row.try_get("visible")?,
            version: row.try_get("version")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        })
    }
    fn columns(&self) -> Vec<(&'static str, db::Value)> {
        vec![
            ("id", (&self.id).into()),
            ("navigation_id", (&self.navigation_id).into()),
            ("parent_id", (&self.parent_id).into()),
            ("label", (&self.label).into()),
            ("target_type", self.target_type.as_str().into()),
            ("target_id", (&self.target_id).into()),
            ("url", (&self.url).into()),
            ("sort_order", self.sort_order.into()),
            ("visible", self.visible.into()),
            ("version", self.version.into()),
            ("created_at", self.created_at.into()),
            ("updated_at", self.updated_at.into()),
        ]
    }
    fn check(&self, conn: &Conn, scope: &Scope, before: Option<&Self>) -> Result<()> {
        let mut errors = Vec::new();
        text_rule(&mut errors, "label", &self.label, 80);
        match self.target_type {
            NavTargetType::Url => {
                match &self.url {
                    Some(url) if is_href(url) => {}
                    Some(url) => errors.push(FieldError::new(
                        "url",
                        format!("\"{url}\" must be a relative path, #anchor, http(s)://, mailto: or tel: link"),
                    )),
                    None => errors.push(FieldError::new("url", "required when targetType is url")),
                }
                if self.target_id.is_some() {
                    errors.push(FieldError::new("targetId", "must be empty when targetType is url"));
                }
            }
            NavTargetType::Placeholder => {
                if self.target_id.is_some() || self.url.is_some() {
                    errors.push(FieldError::new("targetId", "a placeholder has neither targetId nor url"));
                }
            }
            kind => {
                if self.url.is_some() {
                    errors.push(FieldError::new("url", format!("must be empty when targetType is {kind}")));
                }
                if self.target_id.is_none() {
                    errors.push(FieldError::new("targetId", format!("required when targetType is {kind}")));
                }
            }
        }
        ValidationErrors::check(errors)?;
        let unchanged = |f: fn(&NavItem) -> Option<&str>| before.is_some_and(|b| f(b) == f(self));
        let joins_top_level = self.parent_id.is_none()
            && !(unchanged(|n| n.parent_id.as_deref()) && unchanged(|n| Some(n.navigation_id.as_str())));
        if joins_top_level {
            top_level_room(conn, &self.navigation_id, &self.id)?;
        }
        if !unchanged(|n| Some(n.navigation_id.as_str()))
            && load_live::<Navigation>(conn, scope, &self.navigation_id)?.is_none()
        {
            return Err(StoreError::invalid(
                "navigationId",
                format!("navigation {} does not exist", self.navigation_id),
            ));
        }
        let same_target =
            unchanged(|n| n.target_id.as_deref()) && before.is_some_and(|b| b.target_type == self.target_type);
        if let Some(target) = self.target_id.as_ref().filter(|_| !same_target) {
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
        if let Some(parent) = self.parent_id.as_ref().filter(|_| !unchanged(|n| n.parent_id.as_deref())) {
            let mut cursor = Some(parent.clone());
            let mut depth = 0;
            while let Some(id) = cursor {
                let Some(p) = load_live::<NavItem>(conn, scope, &id)? else {
                    return Err(StoreError::invalid("parentId", format!("nav item {id} does not exist")));
                };
                if p.navigation_id != self.navigation_id {
                    return Err(StoreError::invalid("parentId", "the parent item belongs to another navigation"));
                }
                if p.id == self.id || depth > 16 {
                    return Err(StoreError::invalid("parentId", "moving the item there would make a cycle"));
                }
                cursor = p.parent_id;
                depth += 1;
            }
        }
        Ok(())
    }
}

/// The live page of `scope` with `slug`.
pub(crate) fn page_by_slug(conn: &Conn, scope: &Scope, slug: &str) -> Result<Page> {
    let row = db::query("SELECT * FROM pages WHERE site_id = ?1 AND env = ?2 AND slug = ?3 AND archive_id IS NULL")
        .bind(&scope.site_id)
        .bind(&scope.env)
        .bind(slug)
        .fetch_optional(conn)?;
    row.as_ref().map(Page::from_row).transpose()?.ok_or_else(|| StoreError::not_found("page", slug))
}

/// The live navigation of `scope` with key `id_or_key`, else with that id.
pub(crate) fn navigation(conn: &Conn, scope: &Scope, id_or_key: &str) -> Result<Navigation> {
    if let Some(n) = navigation_by_key(conn, scope, id_or_key)? {
        return Ok(n);
    }
    load_live::<Navigation>(conn, scope, id_or_key)?.ok_or_else(|| StoreError::not_found("navigation", id_or_key))
}
