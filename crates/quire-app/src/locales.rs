//! Locales ([decision 0050]): a site's languages (its admins set them),
//! the translations of a document (whoever may change the document writes
//! them, whoever may publish it publishes them), and which locale a
//! delivery reader gets.
//!
//! [decision 0050]: ../../../docs/decisions/0050-locales.md

use crate::published::Reading;
use crate::{Actor, AppError, AppResult, Permission, authorize};
use quire_core::locale::TRANSLATED;
use quire_core::model::{ChangeContext, EntityKind, Navigation, SiteLocale, Translation};
use quire_store::{DeliveredEntry, DeliveredNavItem, DeliveredPage, EntryFilter, Listing, Translations};
use quire_tools::Services;
use serde_json::Value;

/// The site's locales, the default first.
pub async fn locales(services: &Services, actor: &Actor) -> AppResult<Vec<SiteLocale>> {
    authorize(actor, Permission::Read)?;
    Ok(services.store.site_locales(&actor.scope.site_id).await?)
}

/// Sets the site's locales: those left out are kept with their
/// translations, hidden, until added again.
pub async fn set_locales(services: &Services, actor: &Actor, locales: Vec<SiteLocale>) -> AppResult<Vec<SiteLocale>> {
    authorize(actor, Permission::Administer)?;
    Ok(services.store.set_site_locales(&actor.scope.site_id, locales).await?)
}

/// The kind of a translated document, or a refusal naming the field.
fn translated(kind: EntityKind) -> AppResult<EntityKind> {
    if TRANSLATED.contains(&kind) {
        Ok(kind)
    } else {
        Err(AppError::invalid("entity", format!("{kind} has no translations (pages, entries and navigations have)")))
    }
}

/// The translations of a document (by id), with the locales it lacks and
/// those gone stale.
pub async fn translations(services: &Services, actor: &Actor, kind: EntityKind, id: &str) -> AppResult<Translations> {
    authorize(actor, Permission::Read)?;
    Ok(services.store.translations(&actor.scope, translated(kind)?, id).await?)
}

/// Writes a document's translation into `locale` (its localised fields,
/// replacing what it had): a draft, or published at once with `publish`
/// by whoever may publish the document.
pub async fn translate(
    services: &Services,
    actor: &Actor,
    kind: EntityKind,
    id: &str,
    locale: &str,
    fields: Value,
    publish: bool,
) -> AppResult<Translation> {
    let kind = translated(kind)?;
    authorize(actor, Permission::Write(kind))?;
    if publish {
        authorize(actor, Permission::Publish(kind))?;
    }
    let ctx = ChangeContext { publishing: quire_core::model::Publishing::ByStatus, ..actor.change_context() };
    Ok(services.store.put_translation(&ctx, &actor.scope, kind, id, locale, fields, publish).await?)
}

/// The locale a delivery reader gets: `asked` (`?locale=`, which must be
/// one of the site's) or else the best of `accept` (`Accept-Language`);
/// none for the default (the records' own values).
pub async fn reader_locale(
    services: &Services,
    reading: &Reading,
    asked: Option<&str>,
    accept: Option<&str>,
) -> AppResult<Option<Vec<String>>> {
    Ok(services.store.reader_locale(&reading.scope.site_id, asked, accept).await?)
}

/// A page as `reading` reads it, in the locale a reader asking for
/// `asked` with `accept` gets (see [`reader_locale`]), the site's locales
/// read with it: as it is for the default.
pub async fn delivered_page_asked(
    services: &Services,
    reading: &Reading,
    slug: &str,
    asked: Option<&str>,
    accept: Option<&str>,
) -> AppResult<DeliveredPage> {
    Ok(services.store.delivered_page_for(&reading.scope, slug, reading.version, asked, accept).await?)
}

/// A menu as `reading` reads it, in the locale a reader asking for
/// `asked` with `accept` gets (see [`reader_locale`]), the site's locales
/// read with it; and that locale, unless it is the default.
pub async fn delivered_navigation_asked(
    services: &Services,
    reading: &Reading,
    key: &str,
    asked: Option<&str>,
    accept: Option<&str>,
) -> AppResult<(Navigation, Vec<DeliveredNavItem>, Option<String>)> {
    Ok(services.store.delivered_navigation_for(&reading.scope, key, reading.version, asked, accept).await?)
}

/// A page as `reading` reads it, in the locales of `chain` (see
/// [`reader_locale`]).
pub async fn delivered_page(
    services: &Services,
    reading: &Reading,
    slug: &str,
    chain: &[String],
) -> AppResult<DeliveredPage> {
    Ok(services.store.delivered_page_in(&reading.scope, slug, reading.version, chain).await?)
}

/// A menu as `reading` reads it, in the locales of `chain`: each label and
/// page link from the first locale that has one.
pub async fn delivered_navigation(
    services: &Services,
    reading: &Reading,
    key: &str,
    chain: &[String],
) -> AppResult<(Navigation, Vec<DeliveredNavItem>)> {
    Ok(services.store.delivered_navigation_in(&reading.scope, key, reading.version, chain).await?)
}

/// One page of a collection's entries as `reading` reads them, newest
/// first, of a category or with a tag when given, in the locales of
/// `chain` (see [`reader_locale`]; none: as they are): each localised value
/// from the first locale that has one. `slug` narrows them to the entry
/// with that slug in the first locale of the chain that has one, else its
/// own.
#[allow(clippy::too_many_arguments)]
pub async fn delivered_entries(
    services: &Services,
    reading: &Reading,
    collection: &str,
    category: Option<String>,
    tag: Option<String>,
    slug: Option<&str>,
    limit: u32,
    cursor: Option<&str>,
    chain: &[String],
) -> AppResult<Listing<DeliveredEntry>> {
    let filter = EntryFilter { category, tag, ..EntryFilter::default() };
    let store = &services.store;
    let (scope, version) = (&reading.scope, reading.version);
    Ok(store.delivered_entries_in(scope, collection, &filter, slug, limit, cursor, version, chain).await?)
}
