//! Locales ([decision 0050]): a site's languages, and the translations of
//! its documents into the ones beside the default.
//!
//! A translation is a record of its own (`records.rs`): its document's
//! localised values in one locale, with a draft and a published copy,
//! logged, archived with its document, restored, undone and staged in a
//! release like any document. A locale taken off the site is kept, marked
//! archived, with every translation into it: delivery no longer offers it,
//! and adding it again brings them back.
//!
//! [decision 0050]: ../../../docs/decisions/0050-locales.md

use crate::db::{self, Conn, Row};
use crate::delivery::{DeliveredEntry, DeliveredNavItem, DeliveredPage};
use crate::list::{EntryFilter, EntryView, Listing, encode_key, page_of, push_entry_filter};
use crate::log::new_id;
use crate::record::{Record, Version, create, from_log, is_live, load_live, load_to_change, select_all, write_version};
use crate::records::slug_scope;
use crate::{Result, Scope, Store, StoreError};
use chrono::Utc;
use quire_core::locale::{canonical, chain, check_locales, digest, negotiate, own_fields};
use quire_core::model::*;
use quire_core::{ValidationErrors, fields::FieldDef};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

fn locale_of(row: &Row) -> Result<SiteLocale> {
    Ok(SiteLocale {
        tag: row.try_get("tag")?,
        fallback: row.try_get("fallback")?,
        is_default: row.try_get::<i64, _>("is_default")? == 1,
    })
}

/// The live locales of `site`, the default first.
pub(crate) fn site_locales_in(conn: &Conn, site: &str) -> Result<Vec<SiteLocale>> {
    let rows = db::query(
        "SELECT tag, fallback, is_default FROM site_locales WHERE site_id = ?1 AND archived_at IS NULL
         ORDER BY is_default DESC, position, tag",
    )
    .bind(site)
    .fetch_all(conn)?;
    rows.iter().map(locale_of).collect()
}

/// The default locale's values of the localised fields of document `id`
/// of `kind` (what its translations are made from), for their digest.
fn source_of(conn: &Conn, scope: &Scope, kind: EntityKind, id: &str) -> Result<Value> {
    let localized = |defs: &[FieldDef], content: &Value| -> Value {
        let picked: Map<String, Value> = defs
            .iter()
            .filter(|f| f.localized)
            .filter_map(|f| content.get(&f.name).map(|v| (f.name.clone(), v.clone())))
            .collect();
        Value::Object(picked)
    };
    Ok(match kind {
        EntityKind::Page => {
            let page: Page = load_live(conn, scope, id)?.ok_or_else(|| StoreError::not_found("page", id))?;
            let ids: Vec<String> = db::query_scalar(
                "SELECT id FROM page_sections WHERE page_id = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL
                 ORDER BY sort_order, id",
            )
            .bind(id)
            .bind_scope(scope)
            .fetch_all(conn)?;
            let mut sections = Map::new();
            for section_id in ids {
                let Some(section) = load_live::<PageSection>(conn, scope, &section_id)? else { continue };
                let template = crate::record::by_key::<SectionTemplate>(conn, scope, &section.template_key)?;
                let defs = template.map(|t| t.fields).unwrap_or_default();
                sections.insert(section_id, localized(&defs, &section.content));
            }
            json!({ "name": page.name, "slug": page.slug, "meta": page.meta, "sections": sections })
        }
        EntityKind::Entry => {
            let entry: Entry = load_live(conn, scope, id)?.ok_or_else(|| StoreError::not_found("entry", id))?;
            let collection: Collection = crate::record::find(conn, scope, &entry.collection_id)?;
            let content = localized(&collection.fields, &entry.content);
            json!({ "title": entry.title, "slug": entry.slug, "excerpt": entry.excerpt, "content": content })
        }
        EntityKind::Navigation => {
            load_live::<Navigation>(conn, scope, id)?.ok_or_else(|| StoreError::not_found("navigation", id))?;
            let rows: Vec<(String, String)> = db::query_as(
                "SELECT id, label FROM nav_items WHERE navigation_id = ?1 AND site_id = ?2 AND env = ?3
                 AND archive_id IS NULL ORDER BY id",
            )
            .bind(id)
            .bind_scope(scope)
            .fetch_all(conn)?;
            let items: Map<String, Value> =
                rows.into_iter().map(|(id, label)| (id, json!({ "label": label }))).collect();
            json!({ "items": items })
        }
        other => return Err(StoreError::invalid("entity", format!("{other} has no translations"))),
    })
}

/// The translations of the live document `id` of `kind` (see
/// [`Store::translations`]).
pub(crate) fn translations_of(c: &Conn, scope: &Scope, kind: EntityKind, id: &str) -> Result<Translations> {
    let locales = site_locales_in(c, &scope.site_id)?;
    let mut out = Translations {
        default_locale: locales.iter().find(|l| l.is_default).map(|l| l.tag.clone()).unwrap_or_default(),
        translations: Vec::new(),
        missing: Vec::new(),
        stale: Vec::new(),
    };
    // The source's digest, made once a translation is there to compare with.
    let mut source: Option<String> = None;
    for locale in locales.iter().filter(|l| !l.is_default) {
        match translation_in(c, scope, id, &locale.tag, Version::Working)? {
            Some(t) => {
                let source = match &source {
                    Some(s) => s,
                    None => source.insert(digest(&source_of(c, scope, kind, id)?)),
                };
                let stale = t.source_hash != *source;
                if stale {
                    out.stale.push(locale.tag.clone());
                }
                let published = translation_in(c, scope, id, &locale.tag, Version::Published)?.is_some();
                out.translations.push(TranslationState { translation: t, stale, published });
            }
            None => out.missing.push(locale.tag.clone()),
        }
    }
    if source.is_none() {
        require_document(c, scope, kind, id)?;
    }
    Ok(out)
}

/// Not found unless document `id` of `kind` is live; refused for a kind
/// that has no translations (as [`source_of`]).
fn require_document(conn: &Conn, scope: &Scope, kind: EntityKind, id: &str) -> Result<()> {
    let noun = match kind {
        EntityKind::Page => "page",
        EntityKind::Entry => "entry",
        EntityKind::Navigation => "navigation",
        other => return Err(StoreError::invalid("entity", format!("{other} has no translations"))),
    };
    if is_live(conn, scope, kind, id)? { Ok(()) } else { Err(StoreError::not_found(noun, id)) }
}

/// The live translation of document `id` into `locale`, as `version` holds
/// it.
pub(crate) fn translation_in(
    conn: &Conn,
    scope: &Scope,
    id: &str,
    locale: &str,
    version: Version,
) -> Result<Option<Translation>> {
    let table = version.table(EntityKind::Translation);
    let row = db::query(format!(
        "SELECT {} FROM {table} WHERE record_id = ?1 AND locale = ?2 AND site_id = ?3 AND env = ?4 AND archive_id IS NULL",
        select_all(&Translation::ENTITY, conn, table)
    ))
    .bind(id)
    .bind(locale)
    .bind_scope(scope)
    .fetch_optional(conn)?;
    row.as_ref().map(Translation::from_row).transpose()
}

/// Where a translation stands against its document now.
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TranslationState {
    /// The translation (its working copy).
    pub translation: Translation,
    /// Whether the default locale's values changed since it was written.
    pub stale: bool,
    /// Whether it is on the public site.
    pub published: bool,
}

/// A document's locales: which of the site's others it has a translation
/// in, which it lacks, and which are stale.
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Translations {
    /// The site's default locale (the document's own values).
    pub default_locale: String,
    /// Its translations, by locale.
    pub translations: Vec<TranslationState>,
    /// The site's other locales it has no translation in.
    pub missing: Vec<String>,
    /// The locales whose translation is stale.
    pub stale: Vec<String>,
}

impl Store {
    /// The live locales of `site` (id), the default first.
    pub async fn site_locales(&self, site: &str) -> Result<Vec<SiteLocale>> {
        let site = site.to_string();
        // One indexed read, asked by every delivery in a locale: no hand-off.
        self.db.read_short(move |c| site_locales_in(c, &site)).await
    }

    /// Sets the locales of `site` (id) to `locales`, in their order: new
    /// ones are added, those left out are archived with their translations
    /// kept (adding one again brings them back). The default stays: the
    /// records' own values are in it.
    pub async fn set_site_locales(&self, site: &str, locales: Vec<SiteLocale>) -> Result<Vec<SiteLocale>> {
        ValidationErrors::check(check_locales(&locales))?;
        let site = site.to_string();
        self.db
            .write(move |c| {
                let now = site_locales_in(c, &site)?;
                let default = now.iter().find(|l| l.is_default).map(|l| l.tag.clone());
                let wanted = locales.iter().find(|l| l.is_default).map(|l| l.tag.clone());
                if default.is_some() && default != wanted {
                    return Err(StoreError::invalid(
                        "locales",
                        format!(
                            "the default locale stays {}: the records' own values are in it",
                            default.unwrap_or_default()
                        ),
                    ));
                }
                let at = Utc::now();
                db::query("UPDATE site_locales SET archived_at = ?2 WHERE site_id = ?1 AND archived_at IS NULL")
                    .bind(&site)
                    .bind(at)
                    .execute(c)?;
                for (position, locale) in locales.iter().enumerate() {
                    let done = db::query(
                        "UPDATE site_locales SET fallback = ?3, is_default = ?4, position = ?5, archived_at = NULL
                         WHERE site_id = ?1 AND tag = ?2",
                    )
                    .bind(&site)
                    .bind(&locale.tag)
                    .bind(&locale.fallback)
                    .bind(i64::from(locale.is_default))
                    .bind(position as i64)
                    .execute(c)?;
                    if done.rows_affected() == 0 {
                        db::query(
                            "INSERT INTO site_locales (site_id, tag, fallback, is_default, position, created_at)
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        )
                        .bind(&site)
                        .bind(&locale.tag)
                        .bind(&locale.fallback)
                        .bind(i64::from(locale.is_default))
                        .bind(position as i64)
                        .bind(at)
                        .execute(c)?;
                    }
                }
                site_locales_in(c, &site)
            })
            .await
    }

    /// The translations of document `id` of `kind` (live), with which of
    /// the site's locales it lacks and which went stale: lookups by the
    /// record's id and the locales' index, in one snapshot, on the calling
    /// thread (`Db::read_short`).
    pub async fn translations(&self, scope: &Scope, kind: EntityKind, id: &str) -> Result<Translations> {
        let (scope, id) = (scope.clone(), id.to_string());
        self.db.read_short(move |c| c.transaction(false, |c| translations_of(c, &scope, kind, &id))).await
    }

    /// What the live translations `ids` translate: for each found, its id,
    /// its document's kind and id, and its locale.
    pub async fn translated_documents(
        &self,
        scope: &Scope,
        ids: &[String],
    ) -> Result<Vec<(String, EntityKind, String, String)>> {
        let (scope, ids) = (scope.clone(), ids.to_vec());
        self.db
            .read(move |c| {
                let mut out = Vec::new();
                for id in &ids {
                    let row: Option<(String, String, String)> = db::query_as(
                        "SELECT record_kind, record_id, locale FROM translations
                         WHERE id = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL",
                    )
                    .bind(id)
                    .bind_scope(&scope)
                    .fetch_optional(c)?;
                    if let Some((kind, record, locale)) = row {
                        out.push((id.clone(), EntityKind::parse("recordKind", &kind)?, record, locale));
                    }
                }
                Ok(out)
            })
            .await
    }

    /// The working copies of document `id`'s translations into each of
    /// `locales` it has, in their order.
    pub async fn translations_in(&self, scope: &Scope, id: &str, locales: &[String]) -> Result<Vec<Translation>> {
        let (scope, id, locales) = (scope.clone(), id.to_string(), locales.to_vec());
        self.db
            .read(move |c| {
                let mut out = Vec::new();
                for locale in &locales {
                    out.extend(translation_in(c, &scope, &id, locale, Version::Working)?);
                }
                Ok(out)
            })
            .await
    }

    /// The document of `kind` (within `collection`, for entries) whose
    /// working translation into `locale` has slug `slug`, if one has.
    pub async fn translated_by_slug(
        &self,
        scope: &Scope,
        kind: EntityKind,
        collection: Option<&str>,
        locale: &str,
        slug: &str,
    ) -> Result<Option<String>> {
        let (scope, slug) = (scope.clone(), slug.to_string());
        let within = slug_scope(kind, collection, locale);
        self.db
            .read(move |c| {
                db::query_scalar(format!(
                    "SELECT record_id FROM {} WHERE site_id = ?1 AND env = ?2 AND slug_scope = ?3 AND slug = ?4
                     AND archive_id IS NULL",
                    Version::Working.table(EntityKind::Translation)
                ))
                .bind_scope(&scope)
                .bind(within)
                .bind(&slug)
                .fetch_optional(c)
            })
            .await
    }

    /// Writes the translation of document `id` of `kind` into `locale`:
    /// its localised `fields` (replacing what it had), made from the
    /// default locale's values as they are now. A new one is a draft; with
    /// `publish` (and a caller who publishes by status) it is published in
    /// the same transaction.
    #[allow(clippy::too_many_arguments)]
    pub async fn put_translation(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        kind: EntityKind,
        id: &str,
        locale: &str,
        fields: Value,
        publish: bool,
    ) -> Result<Translation> {
        let (ctx, scope, id, locale) = (ctx.clone(), scope.clone(), id.to_string(), locale.to_string());
        self.db
            .write(move |c| {
                let source = digest(&source_of(c, &scope, kind, &id)?);
                let collection = match kind {
                    EntityKind::Entry => load_live::<Entry>(c, &scope, &id)?.map(|e| e.collection_id),
                    _ => None,
                };
                let slug = fields.get("slug").and_then(Value::as_str).map(str::to_string);
                let status = if publish { PublishStatus::Published } else { PublishStatus::Draft };
                let existing = translation_in(c, &scope, &id, &locale, Version::Working)?;
                let written = match existing {
                    None => {
                        let now = Utc::now();
                        let t = Translation {
                            id: new_id(),
                            record_kind: kind,
                            record_id: id.clone(),
                            locale: locale.clone(),
                            slug,
                            slug_scope: slug_scope(kind, collection.as_deref(), &locale),
                            fields,
                            source_hash: source,
                            status,
                            version: 1,
                            created_at: now,
                            updated_at: now,
                        };
                        create(c, &ctx, &scope, &t)?;
                        t
                    }
                    Some(t) => {
                        let before: Translation = load_to_change(c, &scope, &t.id)?
                            .ok_or_else(|| StoreError::not_found("translation", &t.id))?;
                        let mut after = before.clone();
                        after.fields = fields;
                        after.slug = slug;
                        after.source_hash = source;
                        if publish {
                            after.status = PublishStatus::Published;
                        }
                        if after != before {
                            write_version(c, &scope, &ctx, &before, &mut after, ChangeAction::Update)?;
                        }
                        after
                    }
                };
                if publish && ctx.publishing == Publishing::ByStatus {
                    crate::record::publish_document(c, &ctx, &scope, EntityKind::Translation, &written.id)?;
                }
                Ok(written)
            })
            .await
    }

    /// The locales a delivery reader gets, the asked one first, the default
    /// last (see `quire_core::locale::chain`): of `asked` (`?locale=`, which
    /// must be one of the site's `locales`), or else of the best of `accept`
    /// (`Accept-Language`); none for the default (the records' own values).
    pub fn reader_chain(
        locales: &[SiteLocale],
        asked: Option<&str>,
        accept: Option<&str>,
    ) -> Result<Option<Vec<String>>> {
        let tag = match asked {
            Some(asked) => match canonical(asked).and_then(|c| locales.iter().find(|l| l.tag == c)) {
                Some(l) => l.tag.clone(),
                None => {
                    let tags: Vec<&str> = locales.iter().map(|l| l.tag.as_str()).collect();
                    return Err(StoreError::invalid(
                        "locale",
                        format!("{asked} is not one of the site's locales ({})", tags.join(", ")),
                    ));
                }
            },
            None => match accept.and_then(|a| negotiate(a, locales)) {
                Some(tag) => tag,
                None => return Ok(None),
            },
        };
        if locales.iter().any(|l| l.tag == tag && l.is_default) {
            return Ok(None);
        }
        Ok(Some(chain(locales, &tag)))
    }

    /// The locales a delivery reader of `site` (id) gets (see
    /// [`Store::reader_chain`]), its locales read with no hand-off; none
    /// without a locale asked for or an `Accept-Language` (no read).
    pub async fn reader_locale(
        &self,
        site: &str,
        asked: Option<&str>,
        accept: Option<&str>,
    ) -> Result<Option<Vec<String>>> {
        if asked.is_none() && accept.is_none() {
            return Ok(None);
        }
        let locales = self.site_locales(site).await?;
        Store::reader_chain(&locales, asked, accept)
    }

    /// The navigation `key` with its visible items as `version` holds
    /// them, in the locales of `chain` (see [`Store::delivered_page_in`]):
    /// each label from the first locale of the chain that has it, each
    /// page's link by its slugs in the same way.
    pub async fn delivered_navigation_in(
        &self,
        scope: &Scope,
        key: &str,
        version: Version,
        chain: &[String],
    ) -> Result<(Navigation, Vec<DeliveredNavItem>)> {
        let (scope, key, chain) = (scope.clone(), key.to_string(), chain.to_vec());
        // A few indexed reads per item, as the default locale's menu: short.
        self.db
            .read_short(move |c| {
                c.transaction(false, |c| crate::delivery::navigation_items_in(c, &scope, &key, version, &chain))
            })
            .await
    }

    /// The navigation `key` as `version` holds it, in the locale a reader
    /// gets (see [`Store::reader_chain`]: `asked` is `?locale=`, `accept` the
    /// `Accept-Language` header), and that locale when it is not the
    /// default: the site's locales read with the menu, in one snapshot and
    /// with no hand-off.
    pub async fn delivered_navigation_for(
        &self,
        scope: &Scope,
        key: &str,
        version: Version,
        asked: Option<&str>,
        accept: Option<&str>,
    ) -> Result<(Navigation, Vec<DeliveredNavItem>, Option<String>)> {
        let (scope, key) = (scope.clone(), key.to_string());
        let (asked, accept) = (asked.map(str::to_string), accept.map(str::to_string));
        self.db
            .read_short(move |c| {
                c.transaction(false, |c| {
                    let chain = chain_in(c, &scope, asked.as_deref(), accept.as_deref())?.unwrap_or_default();
                    let (nav, items) = crate::delivery::navigation_items_in(c, &scope, &key, version, &chain)?;
                    Ok((nav, items, chain.into_iter().next()))
                })
            })
            .await
    }

    /// The page `slug` (its own, or its slug in one of `chain`'s locales)
    /// as `version` holds it, with the values of `chain` laid over its own:
    /// `chain` is the locales a reader gets, the asked one first, the
    /// default last (see `quire_core::locale::chain`).
    pub async fn delivered_page_in(
        &self,
        scope: &Scope,
        slug: &str,
        version: Version,
        chain: &[String],
    ) -> Result<DeliveredPage> {
        let (scope, slug, chain) = (scope.clone(), slug.to_string(), chain.to_vec());
        // A few indexed reads, and one per ancestor: short, as the default
        // locale's page is.
        self.db.read_short(move |c| c.transaction(false, |c| page_in(c, &scope, &slug, version, &chain))).await
    }

    /// The page `slug` as `version` holds it, in the locale a reader gets
    /// (see [`Store::reader_chain`]: `asked` is `?locale=`, `accept` the
    /// `Accept-Language` header): the site's locales read with the page, in
    /// one snapshot and with no hand-off; the page as it is for the
    /// default.
    pub async fn delivered_page_for(
        &self,
        scope: &Scope,
        slug: &str,
        version: Version,
        asked: Option<&str>,
        accept: Option<&str>,
    ) -> Result<DeliveredPage> {
        let (scope, slug) = (scope.clone(), slug.to_string());
        let (asked, accept) = (asked.map(str::to_string), accept.map(str::to_string));
        self.db
            .read_short(move |c| {
                c.transaction(false, |c| match chain_in(c, &scope, asked.as_deref(), accept.as_deref())? {
                    Some(chain) => page_in(c, &scope, &slug, version, &chain),
                    None => crate::delivery::page_of(c, &scope, &slug, version),
                })
            })
            .await
    }
}

/// [`Store::reader_chain`] of the site of `scope`, its locales read on `conn`;
/// none without a locale asked for or an `Accept-Language` (no read).
fn chain_in(conn: &Conn, scope: &Scope, asked: Option<&str>, accept: Option<&str>) -> Result<Option<Vec<String>>> {
    if asked.is_none() && accept.is_none() {
        return Ok(None);
    }
    Store::reader_chain(&site_locales_in(conn, &scope.site_id)?, asked, accept)
}

/// The page `slug` of `version` (its own, or its slug in one of the
/// translated locales of `chain`, which come first) with the values of
/// `chain` laid over its own (see [`Store::delivered_page_in`]): the page
/// is read with its translations into the chain's locales in one
/// statement, then its sections, then its ancestors (if any), each with
/// its slugs in those locales.
fn page_in(conn: &Conn, scope: &Scope, slug: &str, version: Version, chain: &[String]) -> Result<DeliveredPage> {
    let Some((default, translated)) = chain.split_last() else {
        return crate::delivery::page_of(conn, scope, slug, version);
    };
    let pages = version.table(EntityKind::Page);
    let translations = version.table(EntityKind::Translation);
    // The page by its slug in the first locale of the chain that has it,
    // else by its own (each by its index, then the row by its key), with
    // its translation into each locale by theirs: one statement.
    let mut sql = "SELECT p.*".to_string();
    let mut by_slug = Vec::new();
    for n in 0..translated.len() {
        let (locale, within) = (4 + 2 * n, 5 + 2 * n);
        sql.push_str(&format!(
            ", (SELECT {} FROM {translations} t WHERE t.record_id = p.id AND t.site_id = p.site_id
             AND t.env = p.env AND t.locale = ?{locale} AND t.archive_id IS NULL) AS translation_{n}",
            from_log(conn, "t", "fields")
        ));
        by_slug.push(format!(
            "(SELECT record_id FROM {translations} WHERE site_id = ?1 AND env = ?2 AND slug_scope = ?{within}
             AND slug = ?3 AND archive_id IS NULL LIMIT 1)"
        ));
    }
    by_slug
        .push(format!("(SELECT id FROM {pages} WHERE site_id = ?1 AND env = ?2 AND slug = ?3 AND archive_id IS NULL)"));
    let by_slug = match by_slug.len() {
        1 => by_slug.remove(0),
        _ => format!("COALESCE({})", by_slug.join(", ")),
    };
    sql.push_str(&format!(" FROM {pages} p WHERE p.id = {by_slug} AND p.archive_id IS NULL"));
    let mut q = db::query(sql).bind_scope(scope).bind(slug);
    for locale in translated {
        q = q.bind(locale.as_str()).bind(slug_scope(EntityKind::Page, None, locale));
    }
    let row = q.fetch_optional(conn)?.ok_or_else(|| StoreError::not_found("page", slug))?;
    let mut page = Page::from_row(&row)?;
    let mut sources = Vec::new();
    for (n, locale) in translated.iter().enumerate() {
        let fields: Option<String> = row.try_get(format!("translation_{n}").as_str())?;
        if let Some(fields) = fields {
            sources.push((locale.as_str(), serde_json::from_str::<Value>(&fields)?));
        }
    }
    let sections = crate::delivery::sections_of(conn, scope, &page.id, version)?;
    let own_slug = page.slug.clone();
    let mut from: BTreeMap<String, String> = BTreeMap::new();
    // The fields of the page itself, each moved out of the first
    // translation that has it.
    for field in own_fields(EntityKind::Page) {
        let found =
            sources.iter_mut().find_map(|(l, f)| f.get_mut(*field).filter(|v| !v.is_null()).map(|v| (*l, v.take())));
        let locale = match found {
            Some((locale, value)) => {
                match *field {
                    "name" => page.name = value.as_str().unwrap_or_default().to_string(),
                    "slug" => page.slug = value.as_str().unwrap_or_default().to_string(),
                    _ => page.meta = value,
                }
                locale
            }
            None => default.as_str(),
        };
        from.insert((*field).to_string(), locale.to_string());
    }
    let mut page = DeliveredPage { page, path: String::new(), sections, locale: None, locale_of: BTreeMap::new() };
    // Each section's localised content.
    for section in &mut page.sections {
        let Value::Object(content) = &mut section.content else { continue };
        let mut translated: Vec<(&str, &mut Map<String, Value>)> = sources
            .iter_mut()
            .filter_map(|(l, f)| f.get_mut("sections")?.get_mut(&section.id)?.as_object_mut().map(|m| (*l, m)))
            .collect();
        if translated.is_empty() {
            continue;
        }
        let names: std::collections::BTreeSet<String> =
            translated.iter().flat_map(|(_, m)| m.keys().cloned()).collect();
        for name in names {
            let found = translated
                .iter_mut()
                .find_map(|(l, m)| m.get_mut(&name).filter(|v| !v.is_null()).map(|v| (*l, v.take())));
            if let Some((locale, value)) = found {
                from.insert(format!("sections.{}.{name}", section.id), locale.to_string());
                content.insert(name, value);
            }
        }
    }
    // Its own segment is known; its ancestors' are read.
    let mut segments = match &page.page.parent_id {
        None => Vec::new(),
        Some(parent) => {
            let mut known = std::collections::HashMap::new();
            crate::delivery::page_segments(conn, scope, parent, version, translated, &mut known)?
                .ok_or_else(|| StoreError::not_found("page", slug))?
        }
    };
    segments.push((own_slug, page.page.slug.clone()));
    let home = segments.first().is_some_and(|(own, _)| own == "home");
    page.path = crate::delivery::path_of(home, segments.iter().map(|(_, s)| s.as_str()));
    page.locale = Some(chain[0].clone());
    page.locale_of = from;
    Ok(page)
}

impl Store {
    /// One page of the entries of `collection` (id or slug) as `version`
    /// holds them, newest first, each with the values of `chain` laid over
    /// its own as [`Store::delivered_page_in`] lays them over a page's (a
    /// chain of the default alone, or none, lays nothing). The page with
    /// the translations of its entries into the chain's locales is one
    /// statement, read with the collection's localised fields in one
    /// snapshot, whatever the page's length. `slug` narrows it to the entry
    /// with that slug in the first locale of the chain that has it, else
    /// its own.
    #[allow(clippy::too_many_arguments)]
    pub async fn delivered_entries_in(
        &self,
        scope: &Scope,
        collection: &str,
        filter: &EntryFilter,
        slug: Option<&str>,
        limit: u32,
        cursor: Option<&str>,
        version: Version,
        chain: &[String],
    ) -> Result<Listing<DeliveredEntry>> {
        let (scope, collection, filter) = (scope.clone(), collection.to_string(), filter.clone());
        let (slug, cursor, chain) = (slug.map(str::to_string), cursor.map(str::to_string), chain.to_vec());
        self.db
            .read_short(move |c| {
                c.transaction(false, |c| {
                    let (collection, localized) = localized_fields(c, &scope, &collection)?;
                    let translated = &chain[..chain.len().saturating_sub(1)];
                    let table = version.table(EntityKind::Entry);
                    let translations = version.table(EntityKind::Translation);
                    // The page of entries with each one's translation into
                    // each locale of the chain, by the translations' unique
                    // key: one statement, whatever the page's length.
                    let mut q = db::QueryBuilder::new("SELECT *");
                    for (n, locale) in translated.iter().enumerate() {
                        q.push(format!(
                            ", (SELECT {} FROM {translations} t WHERE t.site_id = {table}.site_id
                             AND t.env = {table}.env AND t.record_id = {table}.id AND t.archive_id IS NULL
                             AND t.locale = ",
                            from_log(c, "t", "fields")
                        ));
                        q.push_bind(locale.clone()).push(format!(") AS translation_{n}"));
                    }
                    q.push(format!(" FROM {table} WHERE archive_id IS NULL AND site_id = "));
                    q.push_bind(scope.site_id.clone()).push(" AND env = ").push_bind(scope.env.clone());
                    q.push(" AND collection_id = ").push_bind(collection.clone());
                    push_entry_filter(&mut q, table, &filter, cursor.as_deref())?;
                    if let Some(slug) = &slug {
                        let mut by_translation = None;
                        for locale in translated {
                            by_translation = db::query_scalar::<String>(format!(
                                "SELECT record_id FROM {translations} WHERE site_id = ?1 AND env = ?2
                                 AND slug_scope = ?3 AND slug = ?4 AND archive_id IS NULL"
                            ))
                            .bind_scope(&scope)
                            .bind(slug_scope(EntityKind::Entry, Some(&collection), locale))
                            .bind(slug)
                            .fetch_optional(c)?;
                            if by_translation.is_some() {
                                break;
                            }
                        }
                        match by_translation {
                            Some(id) => q.push(" AND id = ").push_bind(id),
                            None => q.push(" AND slug = ").push_bind(slug.clone()),
                        };
                    }
                    q.push(" ORDER BY id DESC LIMIT ").push_bind(limit as i64 + 1);
                    let mut read = Vec::new();
                    for row in q.build().fetch_all(c)? {
                        let mut sources = Vec::new();
                        for (n, locale) in translated.iter().enumerate() {
                            let fields: Option<String> = row.try_get(format!("translation_{n}").as_str())?;
                            if let Some(fields) = fields {
                                sources.push((locale.clone(), serde_json::from_str::<EntryFields>(&fields)?));
                            }
                        }
                        read.push((EntryView::from_row(&row)?, sources));
                    }
                    let listing = page_of(read, limit, |(e, _)| encode_key(&e.id));
                    let items = match chain.split_last().filter(|(_, t)| !t.is_empty()) {
                        None => listing
                            .items
                            .into_iter()
                            .map(|(entry, _)| Ok(DeliveredEntry { entry, locale: None, locale_of: BTreeMap::new() }))
                            .collect::<Result<Vec<_>>>()?,
                        Some((default, _)) => listing
                            .items
                            .into_iter()
                            .map(|(entry, sources)| localize_entry(entry, &sources, &localized, default, &chain[0]))
                            .collect::<Result<Vec<_>>>()?,
                    };
                    Ok(Listing { items, next_cursor: listing.next_cursor })
                })
            })
            .await
    }
}

/// The id of the live collection `collection` (id or slug) and the names
/// of its localised fields, read without the rest of its definition.
fn localized_fields(conn: &Conn, scope: &Scope, collection: &str) -> Result<(String, Vec<String>)> {
    #[derive(serde::Deserialize)]
    struct Field {
        name: String,
        #[serde(default)]
        localized: bool,
    }
    let row: Option<(String, String)> = db::query_as(
        "SELECT id, fields FROM collections WHERE archive_id IS NULL AND site_id = ?1 AND env = ?2
         AND (slug = ?3 OR id = ?3) LIMIT 1",
    )
    .bind_scope(scope)
    .bind(collection)
    .fetch_optional(conn)?;
    let (id, fields) = row.ok_or_else(|| StoreError::not_found("collection", collection))?;
    let fields: Vec<Field> = serde_json::from_str(&fields)?;
    Ok((id, fields.into_iter().filter(|f| f.localized).map(|f| f.name).collect()))
}

/// The localised values of an entry's translation, its content's read
/// as they are stored (JSON text), not parsed.
#[derive(serde::Deserialize)]
struct EntryFields {
    title: Option<String>,
    slug: Option<String>,
    excerpt: Option<String>,
    #[serde(default)]
    content: BTreeMap<String, Box<serde_json::value::RawValue>>,
}

impl EntryFields {
    /// The translated value of own field `field` (`title`, `slug`,
    /// `excerpt`), if it has one.
    fn own(&self, field: &str) -> Option<&String> {
        match field {
            "title" => self.title.as_ref(),
            "slug" => self.slug.as_ref(),
            _ => self.excerpt.as_ref(),
        }
    }
}

/// Lays the fields of `sources` (translations, by locale in the chain's
/// order) over delivered `entry`: its title, slug and excerpt, from the
/// first that has each, else its own (`default`'s), and each of its
/// collection's `localized` content fields a translation has; `locale_of`
/// says where each came from. Content is passed through as stored JSON
/// text, values and all, rewritten only when a translation changes it.
fn localize_entry(
    mut entry: EntryView,
    sources: &[(String, EntryFields)],
    localized: &[String],
    default: &str,
    asked: &str,
) -> Result<DeliveredEntry> {
    let mut from = BTreeMap::new();
    for field in own_fields(EntityKind::Entry) {
        let locale = match sources.iter().find_map(|(l, f)| f.own(field).map(|v| (l, v))) {
            Some((locale, text)) => {
                match *field {
                    "title" => entry.title = text.clone(),
                    "slug" => entry.slug = text.clone(),
                    _ => entry.excerpt = Some(text.clone()),
                }
                locale.as_str()
            }
            None => default,
        };
        from.insert((*field).to_string(), locale.to_string());
    }
    // Content is read only when a translation has some: what comes from
    // the default is said for the entry's own fields, as for a page's.
    let translated: Vec<(&String, &String, &serde_json::value::RawValue)> = localized
        .iter()
        .filter_map(|name| {
            sources
                .iter()
                .find_map(|(l, f)| f.content.get(name).filter(|v| v.get() != "null").map(|v| (name, l, v.as_ref())))
        })
        .collect();
    if !translated.is_empty() {
        let mut content: BTreeMap<String, &serde_json::value::RawValue> = serde_json::from_str(entry.content.get())?;
        for (name, locale, value) in translated {
            content.insert(name.clone(), value);
            from.insert(format!("content.{name}"), locale.clone());
        }
        let rewritten = serde_json::value::to_raw_value(&content)?;
        entry.content = rewritten;
    }
    Ok(DeliveredEntry { entry, locale: Some(asked.to_string()), locale_of: from })
}
