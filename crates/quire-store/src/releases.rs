//! Releases ([decision 0046]): named sets of documents (a page with its
//! sections, an entry, a navigation with its items), each with what
//! publishing the release does to it — publish the release's copy, take it
//! off the site, or archive it — published together in one transaction and
//! reverted together.
//!
//! Staging a document for publishing copies its draft into the release as
//! it is then, with the versions of its working and published records.
//! Publishing the release checks those versions first: a document whose
//! draft changed or that was published (or taken off the site) since it
//! was staged is a conflict, named, and nothing is written until a person
//! stages it again (taking the new draft) or keeps the release's copy.
//! Then, in the same transaction, each document's working copy becomes the
//! release's copy and is published, as a publish of it alone would be; each
//! write is logged as every write is. A delivery read runs in one snapshot,
//! so a reader sees all of a release or none of it.
//!
//! Publishing records, per document, what was public before and what the
//! release left; reverting checks that the release's result is still what
//! is public and in the draft, then puts back what was public before (an
//! unpublish where nothing was, a restore where it archived).
//!
//! [decision 0046]: ../../../docs/decisions/0046-drafts-and-releases.md

use crate::archive::{archive_in, restore_in};
use crate::confirm::Fingerprint;
use crate::db::{self, Conn, Row};
use crate::locales::{site_locales_in, translation_in};
use crate::log::new_id;
use crate::publishing::{document_kind, publish_in, republish_in, resolve, unpublish_in, write_document};
use crate::record::{Record, Version, document, enum_col, find, json_opt, lock_document, same_content, with_record};
use crate::{Result, Scope, Store, StoreError};
use chrono::{DateTime, Utc};
use quire_core::diff::{Difference, differences};
use quire_core::model::{ChangeContext, EntityKind, Publishing, ReleaseAction, ReleaseState};
use serde::Serialize;
use serde_json::{Value, json};

/// The longest name a release may have, in characters.
const NAME_MAX: usize = 200;

/// The longest description a release may have, in characters.
const DESCRIPTION_MAX: usize = 2000;

/// A release: a named set of documents published together.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Release {
    /// Identifier.
    pub id: String,
    /// Its name (`Spring launch`).
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Where it stands.
    pub state: ReleaseState,
    /// When it is due to publish, while scheduled.
    pub publish_at: Option<DateTime<Utc>>,
    /// Who made it (`user:<id>`, `token:<id>`).
    pub created_by: String,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it or its documents last changed.
    pub updated_at: DateTime<Utc>,
    /// When it was published.
    pub published_at: Option<DateTime<Utc>>,
    /// Who published it.
    pub published_by: Option<String>,
    /// When it was reverted.
    pub reverted_at: Option<DateTime<Utc>>,
    /// Who reverted it.
    pub reverted_by: Option<String>,
    /// Increases with every change of the release or its documents.
    pub version: i64,
    /// Its documents, in the order they were added.
    pub items: Vec<ReleaseItem>,
}

/// One document of a release.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReleaseItem {
    /// The document's kind: page, entry or navigation.
    pub entity: EntityKind,
    /// Its id.
    pub id: String,
    /// What publishing the release does to it.
    pub action: ReleaseAction,
    /// Its readable name when it was staged.
    pub label: String,
    /// Who staged it.
    pub added_by: String,
    /// When it was staged.
    pub added_at: DateTime<Utc>,
    /// The release's version when it was staged.
    pub revision: i64,
    /// The locale of the document's translation that the release
    /// carries, when it is a translation (absent: the document itself).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
}

/// A document of a release as it would publish: its differences against
/// what is public, and the conflict that stops it, if any.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemReview {
    /// The document's kind.
    pub entity: EntityKind,
    /// Its id.
    pub id: String,
    /// Its readable name.
    pub label: String,
    /// The locale of the document's translation it is, if it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// What publishing the release does to it.
    pub action: ReleaseAction,
    /// What is public against what the release would leave, record by
    /// record and field by field (for a published release: what was
    /// public before against what it made public).
    pub differences: Vec<Difference>,
    /// Why the release cannot publish (or revert) as it stands, if it
    /// cannot: the document changed since it was staged (or since the
    /// release published).
    pub conflict: Option<String>,
}

/// A release with each document's differences and conflicts.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReleaseReview {
    /// The release.
    pub release: Release,
    /// Its documents, reviewed, in the order they were added.
    pub items: Vec<ItemReview>,
}

/// What a release's name and description become.
#[derive(Debug, Clone, Default)]
pub struct ReleasePatch {
    /// A new name.
    pub name: Option<String>,
    /// A new description.
    pub description: Option<String>,
}

/// A document to put into a release, and what publishing the release
/// does to it.
#[derive(Debug, Clone)]
pub struct Stage {
    /// Its kind: page, entry, navigation or translation.
    pub entity: EntityKind,
    /// Its id, or a page's slug, a navigation's key.
    pub name: String,
    /// A locale other than the site's default: the document's translation
    /// into it is staged, not the document.
    pub locale: Option<String>,
    /// What publishing the release does to it.
    pub action: ReleaseAction,
    /// Keep the release's copy of it, taking its versions as they are now
    /// (how a conflict is settled in the release's favour), rather than
    /// copying its draft anew.
    pub keep: bool,
}

/// An item as stored, with what the public views leave out.
#[derive(Debug, Clone)]
pub(crate) struct StoredItem {
    /// The item as stored: a translation by its own kind and id.
    pub item: ReleaseItem,
    /// A translation's document: its kind and id.
    translates: Option<(EntityKind, String)>,
    /// The document as the release publishes it (publish only).
    pub document: Option<Value>,
    /// `{working, published}`: the records' versions when staged.
    pub staged: Value,
    /// What was public before the release published (null: nothing).
    replaced: Option<Value>,
    /// What the release left: `{published, working}` versions, or `{archive}`.
    outcome: Option<Value>,
}

impl StoredItem {
    /// The item as people see it: a translation as its document's, with
    /// its locale.
    fn public(&self) -> ReleaseItem {
        let mut item = self.item.clone();
        if let Some((kind, id)) = &self.translates {
            (item.entity, item.id) = (*kind, id.clone());
        }
        item
    }
}

fn release_from_row(row: &Row, items: Vec<ReleaseItem>) -> Result<Release> {
    Ok(db::read_row!(row => Release {
        id, name, description, publish_at, created_by, created_at, updated_at, published_at, published_by,
        reverted_at, reverted_by, version;
        state: enum_col(row, "state", ReleaseState::parse)?,
        items: items,
    }))
}

fn item_from_row(row: &Row) -> Result<StoredItem> {
    Ok(StoredItem {
        item: ReleaseItem {
            entity: enum_col(row, "kind", EntityKind::parse)?,
            id: row.try_get("document_id")?,
            action: enum_col(row, "action", ReleaseAction::parse)?,
            label: row.try_get("label")?,
            added_by: row.try_get("added_by")?,
            added_at: row.try_get("added_at")?,
            revision: row.try_get("revision")?,
            locale: None,
        },
        translates: None,
        document: json_opt(row, "document")?,
        staged: json_opt(row, "staged")?.unwrap_or(Value::Null),
        replaced: json_opt(row, "replaced")?,
        outcome: json_opt(row, "outcome")?,
    })
}

/// The live items of release `id`, in the order they were added.
pub(crate) fn items_of(conn: &Conn, id: &str) -> Result<Vec<StoredItem>> {
    db::query(
        "SELECT * FROM release_items WHERE release_id = ?1 AND removed_at IS NULL ORDER BY added_at, kind, document_id",
    )
    .bind(id)
    .fetch_all(conn)?
    .iter()
    .map(|row| {
        let mut item = item_from_row(row)?;
        if item.item.entity == EntityKind::Translation {
            let of: Option<(String, String, String)> =
                db::query_as("SELECT record_kind, record_id, locale FROM translations WHERE id = ?1")
                    .bind(&item.item.id)
                    .fetch_optional(conn)?;
            if let Some((kind, id, locale)) = of {
                item.translates = EntityKind::parse("recordKind", &kind).ok().map(|kind| (kind, id));
                item.item.locale = Some(locale);
            }
        }
        Ok(item)
    })
    .collect()
}

/// The document a stage names: `kind` and `name` as given, or, with a
/// locale other than the site's default, the document's translation into
/// it (by id), with its label and the locale after it.
fn staged_document(conn: &Conn, scope: &Scope, stage: &Stage) -> Result<(EntityKind, String, String)> {
    let (kind, name) = (stage.entity, stage.name.as_str());
    let doc_id = resolve(conn, scope, kind, name)?;
    let label = label_of(conn, scope, kind, &doc_id)?;
    let Some(locale) = stage.locale.as_deref() else { return Ok((kind, doc_id, label)) };
    let locales = site_locales_in(conn, &scope.site_id)?;
    if locales.iter().any(|l| l.is_default && l.tag == locale) {
        return Ok((kind, doc_id, label));
    }
    if !locales.iter().any(|l| l.tag == locale) {
        let tags: Vec<&str> = locales.iter().map(|l| l.tag.as_str()).collect();
        return Err(StoreError::invalid(
            "locale",
            format!("locale: {locale} is not one of the site's locales ({})", tags.join(", ")),
        ));
    }
    if kind == EntityKind::Translation {
        return Err(StoreError::invalid("locale", "a translation is in its own locale: stage it without one"));
    }
    if stage.action == ReleaseAction::Archive {
        return Err(StoreError::invalid(
            "action",
            format!("a translation is published or taken off the site, not archived: archive {kind} {name} itself"),
        ));
    }
    let noun = document_kind(kind)?;
    let translation = translation_in(conn, scope, &doc_id, locale, Version::Working)?.ok_or_else(|| {
        StoreError::invalid("locale", format!("{noun} {name} has no {locale} translation yet: write it first"))
    })?;
    Ok((EntityKind::Translation, translation.id, format!("{label} ({locale})")))
}

/// Holds release `id` of the scope until the transaction ends, before it
/// is read for a change: on PostgreSQL, where replicas write at once, its
/// row is locked, so a document staged into it cannot land beside a
/// publish, a discard or a schedule that read the release before (and be
/// left out of it). SQLite has one writer.
pub(crate) fn lock(conn: &Conn, scope: &Scope, id: &str) -> Result<()> {
    if conn.is_postgres() {
        db::query("SELECT id FROM releases WHERE id = ?1 AND site_id = ?2 AND env = ?3 FOR UPDATE")
            .bind(id)
            .bind_scope(scope)
            .fetch_optional(conn)?;
    }
    Ok(())
}

/// Release `id` of the scope with its items; not found otherwise.
pub(crate) fn load(conn: &Conn, scope: &Scope, id: &str) -> Result<(Release, Vec<StoredItem>)> {
    let row =
        db::row_in("releases", scope, id).fetch_optional(conn)?.ok_or_else(|| StoreError::not_found("release", id))?;
    let items = items_of(conn, id)?;
    let release = release_from_row(&row, items.iter().map(StoredItem::public).collect())?;
    Ok((release, items))
}

/// The ids and versions of a document's records (root, then parts by id);
/// null when there is no such copy.
pub(crate) fn versions(document: Option<&Value>) -> Value {
    let Some(document) = document else { return Value::Null };
    let version = |r: &Value| json!([r["id"], r["version"]]);
    let mut out = vec![version(&document["record"])];
    out.extend(document["parts"].as_array().into_iter().flatten().map(version));
    Value::Array(out)
}

/// The versions of the working and published copies of a document now.
fn versions_now(conn: &Conn, scope: &Scope, kind: EntityKind, id: &str) -> Result<Value> {
    let working = document(conn, scope, kind, id, Version::Working)?;
    let published = document(conn, scope, kind, id, Version::Published)?;
    Ok(json!({ "working": versions(working.as_ref()), "published": versions(published.as_ref()) }))
}

/// Why `item` cannot publish as staged, if it cannot.
fn staging_conflict(conn: &Conn, scope: &Scope, item: &StoredItem) -> Result<Option<String>> {
    let ReleaseItem { entity: kind, id, label, .. } = &item.item;
    let noun = document_kind(*kind)?;
    let now = versions_now(conn, scope, *kind, id)?;
    let what = format!("{noun} \"{label}\" ({id})");
    Ok(if now["working"].is_null() && item.staged["working"].is_null() {
        // Made in the release: it has no working copy until it publishes.
        None
    } else if now["working"].is_null() {
        Some(format!("{what} was archived since it was staged; restore it or remove it from the release"))
    } else if now["published"] != item.staged["published"] {
        Some(format!(
            "{what} was published or taken off the site since it was staged; stage it again, or keep the release's copy"
        ))
    } else if now["working"] != item.staged["working"] {
        Some(format!(
            "{what} has draft changes made since it was staged; stage it again to take them, or keep the release's copy"
        ))
    } else {
        None
    })
}

/// Why the publish of `item` by its release cannot be reverted, if it cannot.
fn revert_conflict(conn: &Conn, scope: &Scope, item: &StoredItem) -> Result<Option<String>> {
    let ReleaseItem { entity: kind, id, label, action, .. } = &item.item;
    let noun = document_kind(*kind)?;
    let what = format!("{noun} \"{label}\" ({id})");
    let outcome = item.outcome.clone().unwrap_or(Value::Null);
    if *action == ReleaseAction::Archive {
        let live = document(conn, scope, *kind, id, Version::Working)?.is_some();
        return Ok(live.then(|| format!("{what} was restored since the release archived it")));
    }
    let published = document(conn, scope, *kind, id, Version::Published)?;
    let same = match (&published, outcome.get("published").filter(|p| !p.is_null())) {
        (Some(now), Some(then)) => same_content(now, then),
        (None, None) => true,
        _ => false,
    };
    if !same {
        return Ok(Some(format!("{what} was published or taken off the site since the release; revert that first")));
    }
    let working = document(conn, scope, *kind, id, Version::Working)?;
    if working.is_none() {
        return Ok(Some(format!("{what} was archived since the release; restore it first")));
    }
    if versions(working.as_ref()) != outcome["working"] {
        return Ok(Some(format!("{what} has draft changes made since the release; publish or discard them first")));
    }
    Ok(None)
}

/// The document's readable name.
pub(crate) fn label_of(conn: &Conn, scope: &Scope, kind: EntityKind, id: &str) -> Result<String> {
    with_record!(kind, |T| Ok(find::<T>(conn, scope, id)?.label()), else Ok(String::new()))
}

/// The review of one item: its differences and conflict.
fn review_item(conn: &Conn, scope: &Scope, state: ReleaseState, item: &StoredItem) -> Result<ItemReview> {
    let ReleaseItem { entity: kind, id, label, action, .. } = &item.item;
    let (differences, conflict) = match state {
        ReleaseState::Published | ReleaseState::Reverted => {
            let after = item.outcome.as_ref().and_then(|o| o.get("published")).filter(|p| !p.is_null());
            let conflict = if state == ReleaseState::Published { revert_conflict(conn, scope, item)? } else { None };
            (differences(item.replaced.as_ref(), after), conflict)
        }
        _ => {
            let published = document(conn, scope, *kind, id, Version::Published)?;
            let after = match action {
                ReleaseAction::Publish => item.document.clone(),
                _ => None,
            };
            (differences(published.as_ref(), after.as_ref()), staging_conflict(conn, scope, item)?)
        }
    };
    let ReleaseItem { entity, id, locale, .. } = item.public();
    Ok(ItemReview { entity, id, label: label.clone(), locale, action: *action, differences, conflict })
}

fn review_in(conn: &Conn, scope: &Scope, id: &str) -> Result<(ReleaseReview, Fingerprint)> {
    let (release, items) = load(conn, scope, id)?;
    let reviewed = items.iter().map(|i| review_item(conn, scope, release.state, i)).collect::<Result<Vec<_>>>()?;
    let fingerprint = fingerprint_of(&items);
    Ok((ReleaseReview { release, items: reviewed }, fingerprint))
}

/// What an approval of a release's publish or revert is checked against:
/// each document with the release's version when it was staged.
fn fingerprint_of(items: &[StoredItem]) -> Fingerprint {
    items.iter().map(|i| (i.item.entity, i.item.id.clone(), i.item.revision)).collect()
}

/// Refuses unless the release is in one of `states`, naming what it is.
pub(crate) fn require_state(release: &Release, states: &[ReleaseState], doing: &str) -> Result<()> {
    if states.contains(&release.state) {
        return Ok(());
    }
    let hint = match release.state {
        ReleaseState::Scheduled => "; unschedule it first",
        _ => "",
    };
    Err(StoreError::conflict(
        Some("state"),
        format!("release \"{}\" is {}, so it cannot be {doing}{hint}", release.name, release.state),
    ))
}

/// Moves release `id` on a version, with `set` (SQL assignments, `?1`
/// being the time) and its binds.
pub(crate) fn touch(conn: &Conn, scope: &Scope, id: &str, set: &str, binds: Vec<db::Value>) -> Result<()> {
    let sql = format!(
        "UPDATE releases SET {set}{}updated_at = ?1, version = version + 1 WHERE id = ?2 AND site_id = ?3 AND env = ?4",
        if set.is_empty() { "" } else { ", " }
    );
    let mut query = db::query(sql).bind(Utc::now()).bind(id).bind_scope(scope);
    for bind in binds {
        query = query.bind(bind);
    }
    query.execute(conn)?;
    Ok(())
}

fn check_name(name: &str) -> Result<String> {
    quire_core::text::check_line("name", name, NAME_MAX)?;
    Ok(name.trim().to_string())
}

fn check_description(description: &str) -> Result<String> {
    quire_core::text::check_text("description", description, DESCRIPTION_MAX)?;
    Ok(description.to_string())
}

/// Stages the document `name` of `kind` in release `id` (see
/// [`Store::stage`]).
fn stage_in(conn: &Conn, ctx: &ChangeContext, scope: &Scope, id: &str, stage: &Stage) -> Result<()> {
    let Stage { action, keep, .. } = *stage;
    let (release, items) = load(conn, scope, id)?;
    require_state(&release, &[ReleaseState::Open], "changed")?;
    let (kind, doc_id, label) = staged_document(conn, scope, stage)?;
    let (noun, name) = (document_kind(kind)?, &stage.name);
    lock_document(conn, scope, kind, &doc_id)?;
    let working = document(conn, scope, kind, &doc_id, Version::Working)?;
    let published = document(conn, scope, kind, &doc_id, Version::Published)?;
    if action == ReleaseAction::Unpublish && published.is_none() {
        return Err(StoreError::conflict(
            None,
            format!("{noun} {name} is not published, so there is nothing to take off the site"),
        ));
    }
    let existing = items.iter().find(|i| i.item.entity == kind && i.item.id == doc_id);
    let copy = match (action, keep, existing) {
        (ReleaseAction::Publish, true, Some(StoredItem { document: Some(kept), .. })) => Some(kept.clone()),
        (ReleaseAction::Publish, true, _) => {
            return Err(StoreError::conflict(
                Some("keep"),
                format!("release \"{}\" holds no copy of {noun} {name} to keep; stage it without keep", release.name),
            ));
        }
        (ReleaseAction::Publish, false, _) => working.clone(),
        _ => None,
    };
    let staged = json!({ "working": versions(working.as_ref()), "published": versions(published.as_ref()) });
    let now = Utc::now();
    db::query(
        "INSERT INTO release_items (release_id, kind, document_id, action, label, document, staged, revision, added_by, added_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (release_id, kind, document_id) DO UPDATE SET action = excluded.action, label = excluded.label,
           document = excluded.document, staged = excluded.staged, revision = excluded.revision,
           added_by = excluded.added_by, added_at = excluded.added_at, removed_at = NULL",
    )
    .bind(id)
    .bind(kind.as_str())
    .bind(&doc_id)
    .bind(action.as_str())
    .bind(label)
    .bind(copy.map(|c| c.to_string()))
    .bind(staged.to_string())
    .bind(release.version + 1)
    .bind(&ctx.actor)
    .bind(now)
    .execute(conn)?;
    touch(conn, scope, id, "", Vec::new())
}

/// Publishes release `id` (see [`Store::publish_release`]).
pub(crate) fn publish_release_in(
    conn: &Conn,
    ctx: &ChangeContext,
    scope: &Scope,
    id: &str,
    expected: Option<&Fingerprint>,
    states: &[ReleaseState],
) -> Result<()> {
    lock(conn, scope, id)?;
    let (release, items) = load(conn, scope, id)?;
    require_state(&release, states, "published")?;
    if items.is_empty() {
        return Err(StoreError::conflict(None, format!("release \"{}\" has no documents to publish", release.name)));
    }
    check_items(conn, scope, &release, &items, expected, staging_conflict, "publish")?;
    // The release's copies reach the drafts without publishing on the way;
    // each document is then published as a whole.
    let drafts = ChangeContext { publishing: Publishing::Never, ..ctx.clone() };
    let by_status = ChangeContext { publishing: Publishing::ByStatus, ..ctx.clone() };
    for item in writing_order(&items) {
        let (kind, doc_id) = (item.item.entity, item.item.id.as_str());
        let replaced = document(conn, scope, kind, doc_id, Version::Published)?;
        let outcome = match item.item.action {
            ReleaseAction::Publish => {
                if let Some(copy) = &item.document {
                    write_document(conn, &drafts, scope, kind, doc_id, copy)?;
                }
                publish_in(conn, &by_status, scope, kind, doc_id)?;
                left_by_release(conn, scope, kind, doc_id)?
            }
            ReleaseAction::Unpublish => {
                unpublish_in(conn, &by_status, scope, kind, doc_id)?;
                left_by_release(conn, scope, kind, doc_id)?
            }
            ReleaseAction::Archive => {
                let archive = archive_in(conn, &by_status, scope, kind, &[doc_id.to_string()], None)?;
                json!({ "archive": archive.first().map(|a| a.id.clone()) })
            }
        };
        db::query(
            "UPDATE release_items SET replaced = ?1, outcome = ?2 WHERE release_id = ?3 AND kind = ?4 AND document_id = ?5",
        )
        .bind(replaced.map(|r| r.to_string()))
        .bind(outcome.to_string())
        .bind(id)
        .bind(kind.as_str())
        .bind(doc_id)
        .execute(conn)?;
    }
    cancel_waiting_schedules(conn, scope, id)?;
    let documents: Vec<Value> = items
        .iter()
        .map(|i| json!({ "kind": i.item.entity.as_str(), "id": i.item.id, "action": i.item.action }))
        .collect();
    crate::webhooks::announce(
        conn,
        scope,
        &ctx.actor,
        "release",
        "published",
        id,
        json!({ "name": release.name, "documents": documents }),
    )?;
    touch(
        conn,
        scope,
        id,
        "state = ?5, published_at = ?1, published_by = ?6, publish_at = NULL",
        vec![ReleaseState::Published.as_str().into(), ctx.actor.clone().into()],
    )
}

/// The order a release writes its documents in: what it archives, then
/// what it takes off the site, then what it publishes (each in the order
/// they were added), so that a copy may take a key one of the others held;
/// a revert goes the other way.
fn writing_order(items: &[StoredItem]) -> Vec<&StoredItem> {
    let mut ordered: Vec<&StoredItem> = items.iter().collect();
    ordered.sort_by_key(|i| match i.item.action {
        ReleaseAction::Archive => 0,
        ReleaseAction::Unpublish => 1,
        ReleaseAction::Publish => 2,
    });
    ordered
}

/// What a release left of a document: its published copy and the versions
/// of its working records.
fn left_by_release(conn: &Conn, scope: &Scope, kind: EntityKind, id: &str) -> Result<Value> {
    let published = document(conn, scope, kind, id, Version::Published)?;
    let working = document(conn, scope, kind, id, Version::Working)?;
    Ok(json!({ "published": published, "working": versions(working.as_ref()) }))
}

/// Takes what a release's publish (or revert) writes in a draft write's
/// order (see [`crate::publishing::lock_documents`]).
fn lock_items(conn: &Conn, scope: &Scope, items: &[StoredItem]) -> Result<()> {
    let documents: Vec<(EntityKind, &str)> = items.iter().map(|i| (i.item.entity, i.item.id.as_str())).collect();
    crate::publishing::lock_documents(conn, scope, &documents)
}

/// Cancels the schedules of release `id` still waiting: it was published
/// or discarded otherwise.
fn cancel_waiting_schedules(conn: &Conn, scope: &Scope, id: &str) -> Result<()> {
    db::query(
        "UPDATE jobs SET status = 'cancelled', updated_at = ?1 WHERE kind = ?2 AND subject_id = ?3 AND site_id = ?4
         AND env = ?5 AND status = 'queued'",
    )
    .bind(Utc::now())
    .bind(quire_core::model::JobKind::PublishRelease.as_str())
    .bind(id)
    .bind_scope(scope)
    .execute(conn)?;
    Ok(())
}

/// Before a release's publish or revert writes anything: takes its items'
/// locks, refuses unless they are what an approval's preview (`expected`)
/// showed, and refuses naming every item `conflict` finds.
fn check_items(
    conn: &Conn,
    scope: &Scope,
    release: &Release,
    items: &[StoredItem],
    expected: Option<&Fingerprint>,
    conflict: fn(&Conn, &Scope, &StoredItem) -> Result<Option<String>>,
    doing: &str,
) -> Result<()> {
    lock_items(conn, scope, items)?;
    if expected.is_some_and(|e| e != &fingerprint_of(items)) {
        return Err(changed_since_preview());
    }
    let conflicts: Vec<String> =
        items.iter().filter_map(|i| conflict(conn, scope, i).transpose()).collect::<Result<_>>()?;
    if conflicts.is_empty() {
        return Ok(());
    }
    Err(StoreError::conflict(
        None,
        format!("release \"{}\" cannot {doing}; nothing changed: {}", release.name, conflicts.join("; ")),
    ))
}

fn changed_since_preview() -> StoreError {
    StoreError::conflict(None, "the release changed since the preview; preview again and ask for a new approval")
}

/// Reverts release `id` (see [`Store::revert_release`]).
fn revert_release_in(
    conn: &Conn,
    ctx: &ChangeContext,
    scope: &Scope,
    id: &str,
    expected: Option<&Fingerprint>,
) -> Result<()> {
    let (release, items) = load(conn, scope, id)?;
    require_state(&release, &[ReleaseState::Published], "reverted")?;
    check_items(conn, scope, &release, &items, expected, revert_conflict, "be reverted")?;
    let drafts = ChangeContext { publishing: Publishing::Never, ..ctx.clone() };
    let by_status = ChangeContext { publishing: Publishing::ByStatus, ..ctx.clone() };
    for item in writing_order(&items).into_iter().rev() {
        let (kind, doc_id) = (item.item.entity, item.item.id.as_str());
        match (item.item.action, &item.replaced) {
            (ReleaseAction::Archive, _) => {
                let archive = item.outcome.as_ref().and_then(|o| o["archive"].as_str()).map(str::to_string);
                restore_in(conn, &by_status, scope, &archive.into_iter().collect::<Vec<_>>(), None)?;
            }
            // The release left the draft alone: only what was public
            // comes back.
            (ReleaseAction::Unpublish, Some(before)) => republish_in(conn, &by_status, scope, kind, doc_id, before)?,
            (_, Some(before)) => {
                write_document(conn, &drafts, scope, kind, doc_id, before)?;
                publish_in(conn, &by_status, scope, kind, doc_id)?;
            }
            (_, None) => {
                if document(conn, scope, kind, doc_id, Version::Published)?.is_some() {
                    unpublish_in(conn, &by_status, scope, kind, doc_id)?;
                }
            }
        }
    }
    touch(
        conn,
        scope,
        id,
        "state = ?5, reverted_at = ?1, reverted_by = ?6",
        vec![ReleaseState::Reverted.as_str().into(), ctx.actor.clone().into()],
    )
}

impl Store {
    /// Makes an open release named `name` in the scope.
    pub async fn create_release(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        name: &str,
        description: Option<&str>,
    ) -> Result<Release> {
        let name = check_name(name)?;
        let description = check_description(description.unwrap_or_default())?;
        let (ctx, scope) = (ctx.clone(), scope.clone());
        self.db
            .write(move |c| {
                let (id, now) = (new_id(), Utc::now());
                db::query(
                    "INSERT INTO releases (id, site_id, env, name, description, state, created_by, created_at, updated_at, version)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, 1)",
                )
                .bind(&id)
                .bind_scope(&scope)
                .bind(name)
                .bind(description)
                .bind(ReleaseState::Open.as_str())
                .bind(&ctx.actor)
                .bind(now)
                .execute(c)?;
                Ok(load(c, &scope, &id)?.0)
            })
            .await
    }

    /// The scope's releases, newest first, in `state` if given.
    pub async fn releases(&self, scope: &Scope, state: Option<ReleaseState>) -> Result<Vec<Release>> {
        let scope = scope.clone();
        self.db
            .read(move |c| {
                c.transaction(false, |c| {
                    let rows = db::query(
                        "SELECT * FROM releases WHERE site_id = ?1 AND env = ?2 AND (CAST(?3 AS TEXT) IS NULL OR state = ?3)
                         ORDER BY created_at DESC, id DESC",
                    )
                    .bind_scope(&scope)
                    .bind(state.map(|s| s.as_str()))
                    .fetch_all(c)?;
                    rows.iter()
                        .map(|row| {
                            let id: String = row.try_get("id")?;
                            let items = items_of(c, &id)?.into_iter().map(|i| i.item).collect();
                            release_from_row(row, items)
                        })
                        .collect()
                })
            })
            .await
    }

    /// Release `id` with each of its documents' differences against what
    /// is public and the conflicts that would stop it; and what an
    /// approval of its publish (or revert) is checked against.
    pub async fn release_review(&self, scope: &Scope, id: &str) -> Result<(ReleaseReview, Fingerprint)> {
        let (scope, id) = (scope.clone(), id.to_string());
        self.db.read(move |c| c.transaction(false, |c| review_in(c, &scope, &id))).await
    }

    /// Release `id`.
    pub async fn release(&self, scope: &Scope, id: &str) -> Result<Release> {
        let (scope, id) = (scope.clone(), id.to_string());
        self.db.read(move |c| c.transaction(false, |c| Ok(load(c, &scope, &id)?.0))).await
    }

    /// Runs `change` on release `id` of `scope` in one write; answers the
    /// release after it.
    async fn changing(
        &self,
        scope: &Scope,
        id: &str,
        change: impl FnOnce(&Conn, &Scope, &str) -> Result<()> + Send + 'static,
    ) -> Result<Release> {
        let (scope, id) = (scope.clone(), id.to_string());
        self.db
            .write(move |c| {
                lock(c, &scope, &id)?;
                change(c, &scope, &id)?;
                Ok(load(c, &scope, &id)?.0)
            })
            .await
    }

    /// Renames or redescribes an open release.
    pub async fn update_release(
        &self,
        _ctx: &ChangeContext,
        scope: &Scope,
        id: &str,
        patch: ReleasePatch,
    ) -> Result<Release> {
        let name = patch.name.as_deref().map(check_name).transpose()?;
        let description = patch.description.as_deref().map(check_description).transpose()?;
        self.changing(scope, id, move |c, scope, id| {
            let (release, _) = load(c, scope, id)?;
            require_state(&release, &[ReleaseState::Open, ReleaseState::Scheduled], "changed")?;
            let name = name.unwrap_or(release.name);
            let description = description.unwrap_or(release.description);
            touch(c, scope, id, "name = ?5, description = ?6", vec![name.into(), description.into()])
        })
        .await
    }

    /// Puts a document into open release `id` (see [`Stage`]). Publishing
    /// takes a copy of its draft as it is now; staging it again takes the
    /// draft anew.
    pub async fn stage(&self, ctx: &ChangeContext, scope: &Scope, id: &str, stage: Stage) -> Result<Release> {
        let ctx = ctx.clone();
        self.changing(scope, id, move |c, scope, id| stage_in(c, &ctx, scope, id, &stage)).await
    }

    /// Takes the document `doc_id` of `kind` (with `locale`: its
    /// translation into it) out of open release `id`.
    #[allow(clippy::too_many_arguments)]
    pub async fn unstage(
        &self,
        _ctx: &ChangeContext,
        scope: &Scope,
        id: &str,
        kind: EntityKind,
        doc_id: &str,
        locale: Option<&str>,
    ) -> Result<Release> {
        let (doc_id, locale) = (doc_id.to_string(), locale.map(str::to_string));
        self.changing(scope, id, move |c, scope, id| {
            let (release, _) = load(c, scope, id)?;
            require_state(&release, &[ReleaseState::Open], "changed")?;
            let (kind, doc_id) = match &locale {
                Some(locale) => {
                    let named = Stage {
                        entity: kind,
                        name: doc_id.clone(),
                        locale: Some(locale.clone()),
                        action: ReleaseAction::Publish,
                        keep: false,
                    };
                    let (kind, doc_id, _) = staged_document(c, scope, &named)?;
                    (kind, doc_id)
                }
                None => (kind, doc_id.clone()),
            };
            let done = db::query(
                "UPDATE release_items SET removed_at = ?1 WHERE release_id = ?2 AND kind = ?3 AND document_id = ?4
                 AND removed_at IS NULL",
            )
            .bind(Utc::now())
            .bind(id)
            .bind(kind.as_str())
            .bind(&doc_id)
            .execute(c)?;
            if done.rows_affected() == 0 {
                return Err(StoreError::not_found("release item", format!("{kind} {doc_id}")));
            }
            touch(c, scope, id, "", Vec::new())
        })
        .await
    }

    /// Publishes open (or scheduled: now, its schedule cancelled) release
    /// `id` in one transaction: every document as the release says, or none
    /// when one conflicts (the refusal names each). With `expected`,
    /// refuses unless the release holds what that preview showed.
    pub async fn publish_release(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        id: &str,
        expected: Option<&Fingerprint>,
    ) -> Result<Release> {
        let (ctx, expected) = (ctx.clone(), expected.cloned());
        let states = [ReleaseState::Open, ReleaseState::Scheduled];
        self.changing(scope, id, move |c, scope, id| publish_release_in(c, &ctx, scope, id, expected.as_ref(), &states))
            .await
    }

    /// Sets published release `id` back as one unit: each document's
    /// published copy and draft become what was public before the release
    /// (taken off the site where nothing was, restored where it archived).
    /// A document published, changed or restored since is a conflict, and
    /// nothing changes.
    pub async fn revert_release(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        id: &str,
        expected: Option<&Fingerprint>,
    ) -> Result<Release> {
        let (ctx, expected) = (ctx.clone(), expected.cloned());
        self.changing(scope, id, move |c, scope, id| revert_release_in(c, &ctx, scope, id, expected.as_ref())).await
    }

    /// Gives up an open or scheduled release (its schedule cancelled)
    /// without publishing it; it is kept, with its documents, as discarded.
    pub async fn discard_release(&self, _ctx: &ChangeContext, scope: &Scope, id: &str) -> Result<Release> {
        self.changing(scope, id, |c, scope, id| {
            let (release, _) = load(c, scope, id)?;
            require_state(&release, &[ReleaseState::Open, ReleaseState::Scheduled], "discarded")?;
            cancel_waiting_schedules(c, scope, id)?;
            touch(c, scope, id, "state = ?5, publish_at = NULL", vec![ReleaseState::Discarded.as_str().into()])
        })
        .await
    }
}
