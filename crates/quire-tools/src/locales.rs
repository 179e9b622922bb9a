//! The `locale` argument of the tools of pages, sections, posts, entries
//! and menus ([decision 0050]).
//!
//! Without it, or with the site's default locale, a tool does what it
//! always did: the records' own values are the default locale's. With
//! another of the site's locales, a read lays the document's translations
//! along the locale's chain of fallbacks over its own values, each value
//! from the first locale that has it, and says which (`localeOf`); a write
//! changes the document's translation into that locale (a draft, through
//! `Store::put_translation`, as the REST translations route writes it),
//! and refuses, naming them, the fields that have one value in every
//! locale. A create writes the record, then its translation with the same
//! texts.
//!
//! [decision 0050]: ../../../docs/decisions/0050-locales.md

use crate::tool::*;
use quire_core::access::{Permission, authorize};
use quire_core::locale::{canonical, chain, own_fields};
use quire_core::model::{EntityKind, Translation};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// A call's locale, one of the site's other than the default.
#[derive(Debug, Clone)]
pub(crate) struct InLocale {
    /// The locale asked for.
    pub tag: String,
    /// The locales whose values a read gets, the asked one first, the
    /// default last.
    pub chain: Vec<String>,
}

impl InLocale {
    /// The site's default locale.
    pub fn default_tag(&self) -> &str {
        self.chain.last().map_or("", String::as_str)
    }

    /// The locales of the chain that have translations (all but the default).
    fn translated(&self) -> &[String] {
        &self.chain[..self.chain.len().saturating_sub(1)]
    }
}

/// The locale a call asked for: none when it asked for none or for the
/// site's default (the records' own values); a refusal naming the site's
/// locales when it is not one of them.
pub(crate) async fn asked(call: &Call<'_>, locale: Option<&str>) -> Result<Option<InLocale>, ToolError> {
    let Some(asked) = locale else { return Ok(None) };
    let locales = call.store().site_locales(&call.scope().site_id).await?;
    match canonical(asked).and_then(|c| locales.iter().find(|l| l.tag == c)) {
        Some(l) if l.is_default => Ok(None),
        Some(l) => Ok(Some(InLocale { tag: l.tag.clone(), chain: chain(&locales, &l.tag) })),
        None => {
            let tags: Vec<&str> = locales.iter().map(|l| l.tag.as_str()).collect();
            let default = locales.iter().find(|l| l.is_default).map_or("", |l| l.tag.as_str());
            Err(ToolError::invalid(
                format!("locale: {asked} is not one of the site's locales ({})", tags.join(", ")),
                format!("Use one of them, or leave locale out for {default}, the default."),
            ))
        }
    }
}

/// Refuses the arguments of `given` (name, whether given) that are not
/// localised, naming them and the localised ones (`localized`).
pub(crate) fn only_localized(
    l: &InLocale,
    noun: &str,
    given: &[(&str, bool)],
    localized: &[&str],
) -> Result<(), ToolError> {
    let stray: Vec<&str> = given.iter().filter(|(_, set)| *set).map(|(name, _)| *name).collect();
    if stray.is_empty() {
        return Ok(());
    }
    Err(ToolError::invalid(
        format!(
            "locale {}: {} not localised (one value in every locale); a {noun}'s localised fields: {}",
            l.tag,
            match stray.as_slice() {
                [one] => format!("{one} is"),
                many => format!("{} are", many.join(", ")),
            },
            localized.join(", ")
        ),
        format!(
            "Send them without locale (they change every locale), and only localised fields with locale {}.",
            l.tag
        ),
    ))
}

/// Refuses the keys of `content` (a section's or an entry's content
/// changes) that are not among `localized`, the localised fields of `of`.
pub(crate) fn only_localized_content(
    l: &InLocale,
    of: &str,
    content: Option<&Value>,
    localized: &[String],
) -> Result<(), ToolError> {
    let Some(content) = content else { return Ok(()) };
    let Value::Object(content) = content else {
        return Err(ToolError::invalid("content: must be an object", "Send the fields to change as an object."));
    };
    let stray: Vec<String> =
        content.keys().filter(|k| !localized.contains(k)).map(|k| format!("content.{k}")).collect();
    if stray.is_empty() {
        return Ok(());
    }
    let listed = if localized.is_empty() { "none".to_string() } else { localized.join(", ") };
    Err(ToolError::invalid(
        format!(
            "locale {}: {} not localised (one value in every locale); localised fields of {of}: {listed}",
            l.tag,
            if stray.len() == 1 { format!("{} is", stray[0]) } else { format!("{} are", stray.join(", ")) },
        ),
        format!(
            "Send them without locale (they change every locale), and only localised fields with locale {}.",
            l.tag
        ),
    ))
}

/// The localised fields of the template `key` of the call's site.
pub(crate) async fn template_fields(call: &Call<'_>, key: &str) -> Result<Vec<String>, ToolError> {
    let template = call.store().template(call.scope(), key).await?;
    Ok(template.fields.iter().filter(|f| f.localized).map(|f| f.name.clone()).collect())
}

/// The localised fields of collection `id` (or slug) of the call's site.
pub(crate) async fn collection_fields(call: &Call<'_>, id: &str) -> Result<Vec<String>, ToolError> {
    let collection = call.store().collection(call.scope(), id).await?;
    Ok(collection.fields.iter().filter(|f| f.localized).map(|f| f.name.clone()).collect())
}

/// The document of `kind` (within `collection`, for entries) whose slug
/// in one of `l`'s locales, in the chain's order, is `slug`.
pub(crate) async fn by_translated_slug(
    call: &Call<'_>,
    l: &InLocale,
    kind: EntityKind,
    collection: Option<&str>,
    slug: &str,
) -> Result<Option<String>, ToolError> {
    for locale in l.translated() {
        let found = call.store().translated_by_slug(call.scope(), kind, collection, locale, slug).await?;
        if found.is_some() {
            return Ok(found);
        }
    }
    Ok(None)
}

/// Writes the translation of document `id` of `kind` into `l`'s locale:
/// `change` edits the localised fields it has (none, for a new one). A
/// new translation is a draft; a published one's draft changes. Whoever
/// may change the document may write its translations.
pub(crate) async fn write(
    call: &Call<'_>,
    l: &InLocale,
    kind: EntityKind,
    id: &str,
    change: impl FnOnce(&mut Map<String, Value>),
) -> Result<Translation, ToolError> {
    authorize(&call.ctx.principal(), Permission::Write(kind)).map_err(|e| {
        ToolError::new(ErrorCode::Forbidden, e.message, "Ask a person who may change it to write the translation.")
    })?;
    let (store, scope) = (call.store(), call.scope());
    let existing = store.translations_in(scope, id, std::slice::from_ref(&l.tag)).await?;
    let mut fields = match existing.into_iter().next().map(|t| t.fields) {
        Some(Value::Object(fields)) => fields,
        _ => Map::new(),
    };
    change(&mut fields);
    let ctx = call.ctx.change_context();
    Ok(store.put_translation(&ctx, scope, kind, id, &l.tag, Value::Object(fields), false).await?)
}

/// Merges `patch` (content changes: a JSON merge patch, null removes a
/// value so the locale falls back) into `translated` (a translation's
/// values of one record's content). A value the translation lacks starts
/// from the record's own (`own`), so a change to part of an object keeps
/// the rest.
pub(crate) fn merge_content(translated: &mut Map<String, Value>, own: &Value, patch: &Value) {
    let Value::Object(patch) = patch else { return };
    for key in patch.keys() {
        if !translated.contains_key(key)
            && let Some(value) = own.get(key)
        {
            translated.insert(key.clone(), value.clone());
        }
    }
    let mut merged = Value::Object(std::mem::take(translated));
    quire_core::merge::merge_patch(&mut merged, &Value::Object(patch.clone()));
    if let Value::Object(merged) = merged {
        *translated = merged;
    }
}

/// A translation as a write in a locale answers it.
pub(crate) fn translation_json(t: &Translation) -> Value {
    json!({ "id": t.id, "locale": t.locale, "status": t.status, "version": t.version })
}

/// Lays translations over records as tools list them, reading each
/// document's translations (and each template's or collection's localised
/// fields) once.
pub(crate) struct Overlay<'l> {
    l: &'l InLocale,
    sources: HashMap<String, Vec<(String, Value)>>,
    fields: HashMap<String, Vec<String>>,
}

impl<'l> Overlay<'l> {
    /// An overlay in `l`'s locale.
    pub fn new(l: &'l InLocale) -> Self {
        Self { l, sources: HashMap::new(), fields: HashMap::new() }
    }

    /// Document `id`'s translations along the chain: (locale, values).
    async fn sources(&mut self, call: &Call<'_>, id: &str) -> Result<Vec<(String, Value)>, ToolError> {
        if let Some(found) = self.sources.get(id) {
            return Ok(found.clone());
        }
        let found: Vec<(String, Value)> = call
            .store()
            .translations_in(call.scope(), id, self.l.translated())
            .await?
            .into_iter()
            .map(|t| (t.locale, t.fields))
            .collect();
        self.sources.insert(id.to_string(), found.clone());
        Ok(found)
    }

    /// The localised fields of section template `key`.
    async fn template(&mut self, call: &Call<'_>, key: &str) -> Result<Vec<String>, ToolError> {
        let at = format!("template:{key}");
        if let Some(found) = self.fields.get(&at) {
            return Ok(found.clone());
        }
        let found = template_fields(call, key).await?;
        self.fields.insert(at, found.clone());
        Ok(found)
    }

    /// The localised fields of collection `id`.
    async fn collection(&mut self, call: &Call<'_>, id: &str) -> Result<Vec<String>, ToolError> {
        let at = format!("collection:{id}");
        if let Some(found) = self.fields.get(&at) {
            return Ok(found.clone());
        }
        let found = collection_fields(call, id).await?;
        self.fields.insert(at, found.clone());
        Ok(found)
    }

    /// Marks `item` as read in the locale, with where its values came from.
    fn mark(&self, item: &mut Value, from: Map<String, Value>) {
        item["locale"] = Value::String(self.l.tag.clone());
        item["localeOf"] = Value::Object(from);
    }

    /// A page as listed (`pages::page_json`, with its sections if listed).
    pub async fn page(&mut self, call: &Call<'_>, item: &mut Value) -> Result<(), ToolError> {
        let Some(id) = item["id"].as_str().map(str::to_string) else { return Ok(()) };
        let sources = self.sources(call, &id).await?;
        let mut from = Map::new();
        lay_own(item, own_fields(EntityKind::Page), &sources, self.l.default_tag(), &mut from);
        if let Some(sections) = item.get_mut("sections").and_then(Value::as_array_mut) {
            for section in sections {
                self.section_of(call, section, &sources).await?;
            }
        }
        self.mark(item, from);
        Ok(())
    }

    /// A section as listed (`pages::section_json`), from its page's
    /// translations.
    pub async fn section(&mut self, call: &Call<'_>, item: &mut Value) -> Result<(), ToolError> {
        let Some(page) = item["pageId"].as_str().map(str::to_string) else { return Ok(()) };
        let sources = self.sources(call, &page).await?;
        self.section_of(call, item, &sources).await
    }

    async fn section_of(
        &mut self,
        call: &Call<'_>,
        item: &mut Value,
        sources: &[(String, Value)],
    ) -> Result<(), ToolError> {
        let (Some(id), Some(key)) = (item["pageSectionId"].as_str(), item["templateKey"].as_str()) else {
            return Ok(());
        };
        let (id, key) = (id.to_string(), key.to_string());
        let names = self.template(call, &key).await?;
        let translated: Vec<(&str, Option<&Map<String, Value>>)> = sources
            .iter()
            .map(|(l, f)| (l.as_str(), f.get("sections").and_then(|s| s.get(&id)).and_then(Value::as_object)))
            .collect();
        let mut from = Map::new();
        lay_content(item, &names, &translated, self.l.default_tag(), &mut from);
        self.mark(item, from);
        Ok(())
    }

    /// An entry or a post as listed (`posts::entry_json`).
    pub async fn entry(&mut self, call: &Call<'_>, item: &mut Value) -> Result<(), ToolError> {
        let (Some(id), Some(collection)) = (item["id"].as_str(), item["collectionId"].as_str()) else {
            return Ok(());
        };
        let (id, collection) = (id.to_string(), collection.to_string());
        let sources = self.sources(call, &id).await?;
        let names = self.collection(call, &collection).await?;
        let mut from = Map::new();
        lay_own(item, own_fields(EntityKind::Entry), &sources, self.l.default_tag(), &mut from);
        let translated: Vec<(&str, Option<&Map<String, Value>>)> =
            sources.iter().map(|(l, f)| (l.as_str(), f.get("content").and_then(Value::as_object))).collect();
        lay_content(item, &names, &translated, self.l.default_tag(), &mut from);
        self.mark(item, from);
        Ok(())
    }

    /// A menu item as listed (`navigation::nav_item_json`), from its
    /// navigation's translations.
    pub async fn nav_item(&mut self, call: &Call<'_>, item: &mut Value) -> Result<(), ToolError> {
        let (Some(id), Some(navigation)) = (item["id"].as_str(), item["navigationId"].as_str()) else {
            return Ok(());
        };
        let (id, navigation) = (id.to_string(), navigation.to_string());
        let sources = self.sources(call, &navigation).await?;
        let found = sources.iter().find_map(|(l, f)| {
            let label = f.get("items")?.get(&id)?.get("label")?.as_str()?;
            Some((l.clone(), label.to_string()))
        });
        let locale = match found {
            Some((locale, label)) => {
                item["label"] = Value::String(label);
                locale
            }
            None => self.l.default_tag().to_string(),
        };
        let mut from = Map::new();
        from.insert("label".into(), Value::String(locale));
        self.mark(item, from);
        Ok(())
    }
}

/// Lays the first value of `sources` (by locale, in the chain's order) of
/// each of a document's own localised `fields` that `item` shows over it;
/// `from` says which locale each came from (the default when none had it).
fn lay_own(
    item: &mut Value,
    fields: &[&str],
    sources: &[(String, Value)],
    default: &str,
    from: &mut Map<String, Value>,
) {
    for field in fields {
        if item.get(*field).is_none() {
            continue;
        }
        let found = sources.iter().find_map(|(l, f)| f.get(*field).filter(|v| !v.is_null()).map(|v| (l, v)));
        let locale = match found {
            Some((locale, value)) => {
                item[*field] = value.clone();
                locale.as_str()
            }
            None => default,
        };
        from.insert((*field).to_string(), Value::String(locale.to_string()));
    }
}

/// Lays the translated values of the localised content fields `names`
/// over `item`'s `content` (or its `heading`, when content is left out):
/// each from the first of `translated` (by locale, in the chain's order)
/// that has it; `from` says which locale each came from, as
/// `content.<field>`.
fn lay_content(
    item: &mut Value,
    names: &[String],
    translated: &[(&str, Option<&Map<String, Value>>)],
    default: &str,
    from: &mut Map<String, Value>,
) {
    let first = |name: &str| {
        translated.iter().find_map(|(l, m)| m.and_then(|m| m.get(name)).filter(|v| !v.is_null()).map(|v| (*l, v)))
    };
    if let Some(content) = item.get_mut("content").and_then(Value::as_object_mut) {
        for name in names {
            match first(name) {
                Some((locale, value)) => {
                    content.insert(name.clone(), value.clone());
                    from.insert(format!("content.{name}"), Value::String(locale.to_string()));
                }
                None if content.contains_key(name) => {
                    from.insert(format!("content.{name}"), Value::String(default.to_string()));
                }
                None => {}
            }
        }
    } else if item.get("heading").is_some() && names.iter().any(|n| n == "heading") {
        let locale = match first("heading") {
            Some((locale, value)) => {
                item["heading"] = value.clone();
                locale
            }
            None => default,
        };
        from.insert("content.heading".into(), Value::String(locale.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_content_change_in_a_locale_starts_from_the_records_own_value_and_null_falls_back() {
        let own = json!({ "heading": "Hello", "cta": { "label": "Go", "href": "/go" }, "body": "Text" });
        let mut translated = Map::new();
        translated.insert("body".into(), json!("Text auf Deutsch"));
        merge_content(&mut translated, &own, &json!({ "cta": { "label": "Los" } }));
        assert_eq!(
            Value::Object(translated.clone()),
            json!({ "body": "Text auf Deutsch", "cta": { "label": "Los", "href": "/go" } }),
            "the link keeps where it leads; the heading, untouched, still falls back"
        );
        merge_content(&mut translated, &own, &json!({ "body": null, "heading": "Hallo" }));
        assert_eq!(Value::Object(translated), json!({ "heading": "Hallo", "cta": { "label": "Los", "href": "/go" } }));
    }

    #[test]
    fn a_refusal_names_every_field_that_has_one_value_in_every_locale() {
        let l = InLocale { tag: "de".into(), chain: vec!["de".into(), "en".into()] };
        assert!(only_localized(&l, "page", &[("status", false)], &["name"]).is_ok());
        let e = only_localized(&l, "page", &[("status", true), ("sortOrder", true)], &["name", "slug"]).unwrap_err();
        assert_eq!(e.code, ErrorCode::Validation);
        assert!(e.message.starts_with("locale de: status, sortOrder are not localised"), "{}", e.message);
        let fields = vec!["heading".to_string()];
        let e = only_localized_content(&l, "template hero", Some(&json!({ "heading": "x", "image": {} })), &fields)
            .unwrap_err();
        assert!(e.message.contains("content.image is not localised") && e.message.ends_with("hero: heading"));
        assert_eq!(l.default_tag(), "en");
    }
}
