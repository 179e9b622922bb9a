//! Publishing a document (a page with its sections, an entry, a navigation
//! with its items): making its working copy public, taking it off the
//! site, or giving up its draft for what is public. The copies themselves
//! are `record/published.rs`'s.

use crate::archive::{archive_in, restore_in};
use crate::confirm::Fingerprint;
use crate::db::{self, Conn};
use crate::locales::{Translations, translations_of};
use crate::log::logged_publication;
use crate::record::{
    Record, Version, copies_alike, create, document, find, load_live, load_to_change, lock_document, part_of,
    publish_document, put_back, root_of, same_content, unpublish_document, with_record, write_version,
};
use crate::{Result, Scope, Store, StoreError};
use quire_core::diff::{Difference, differences};
use quire_core::model::{ChangeAction, ChangeContext, EntityKind, Publishing};
use serde::Serialize;
use serde_json::Value;

/// Where a document stands with the public site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Publication {
    /// Whether the public site shows it.
    pub published: bool,
    /// Whether its working copy differs from what the public site shows
    /// (never, when it is not published).
    pub changed: bool,
}

/// The kind's noun, or a refusal for a kind that is no document.
pub(crate) fn document_kind(kind: EntityKind) -> Result<&'static str> {
    match root_of(kind) {
        Some((entity, _, _)) => Ok(entity.noun),
        None => Err(StoreError::invalid(
            "entity",
            format!("{kind} is not published on its own: publish its page or navigation, or it has no public copy"),
        )),
    }
}

/// Where the document `id` of `kind` stands; not found unless it is live.
/// The database compares the two copies' rows; only copies whose rows
/// differ are read and compared as documents.
pub(crate) fn publication_in(conn: &Conn, scope: &Scope, kind: EntityKind, id: &str) -> Result<Publication> {
    let noun = document_kind(kind)?;
    match copies_alike(conn, scope, kind, id)? {
        None => return Err(StoreError::not_found(noun, id)),
        Some((false, _)) => return Ok(Publication::default()),
        Some((true, true)) => return Ok(Publication { published: true, changed: false }),
        Some((true, false)) => {}
    }
    let working = document(conn, scope, kind, id, Version::Working)?.ok_or_else(|| StoreError::not_found(noun, id))?;
    Ok(match document(conn, scope, kind, id, Version::Published)? {
        Some(published) => Publication { published: true, changed: !same_content(&working, &published) },
        None => Publication::default(),
    })
}

/// A document's root record with its status set to `status` (as its wire
/// name), written through the log; the write publishes or unpublishes it
/// as the change of status says (see `record/published.rs`).
fn set_status<T: Record>(conn: &Conn, ctx: &ChangeContext, scope: &Scope, id: &str, status: &str) -> Result<()> {
    let current = load_to_change::<T>(conn, scope, id)?.ok_or_else(|| StoreError::not_found(T::ENTITY.noun, id))?;
    let mut snapshot = serde_json::to_value(&current)?;
    snapshot["status"] = Value::String(status.to_string());
    if status == "published" && snapshot.get("publishedAt").is_some_and(Value::is_null) {
        snapshot["publishedAt"] = serde_json::to_value(chrono::Utc::now())?;
    }
    let mut next: T = serde_json::from_value(snapshot)?;
    let by_status = ChangeContext { publishing: Publishing::ByStatus, ..ctx.clone() };
    write_version(conn, scope, &by_status, &current, &mut next, ChangeAction::Update).map(drop)
}

/// The status of the live root record `id` of `kind`, if it has one.
fn status_of(conn: &Conn, scope: &Scope, kind: EntityKind, id: &str) -> Result<Option<String>> {
    fn of<T: Record>(conn: &Conn, scope: &Scope, id: &str) -> Result<Option<String>> {
        let record = load_live::<T>(conn, scope, id)?.ok_or_else(|| StoreError::not_found(T::ENTITY.noun, id))?;
        Ok(serde_json::to_value(&record)?.get("status").and_then(Value::as_str).map(str::to_string))
    }
    with_record!(kind, |T| of::<T>(conn, scope, id), else Ok(None))
}

/// Publishes the live document `id` of `kind` (see [`PublishAction::Publish`]).
pub(crate) fn publish_in(conn: &Conn, ctx: &ChangeContext, scope: &Scope, kind: EntityKind, id: &str) -> Result<()> {
    document_kind(kind)?;
    match status_of(conn, scope, kind, id)? {
        Some(status) if status != "published" => {
            with_record!(kind, |T| set_status::<T>(conn, ctx, scope, id, "published"), else Ok(()))
        }
        _ => publish_document(conn, ctx, scope, kind, id).map(drop),
    }
}

/// Puts `copy`, a published copy document `id` of `kind` had (as
/// [`document`] reads it), back on the site, logged as a publish. The
/// working copy keeps its content: it only takes back the copy's status,
/// which taking the document off the site had changed.
pub(crate) fn republish_in(
    conn: &Conn,
    ctx: &ChangeContext,
    scope: &Scope,
    kind: EntityKind,
    id: &str,
    copy: &Value,
) -> Result<()> {
    let status = &copy["record"]["status"];
    if let Some(mut working) = document(conn, scope, kind, id, Version::Working)?
        && !status.is_null()
        && working["record"]["status"] != *status
    {
        working["record"]["status"] = status.clone();
        let drafts = ChangeContext { publishing: Publishing::Never, ..ctx.clone() };
        write_document(conn, &drafts, scope, kind, id, &working)?;
    }
    let before = document(conn, scope, kind, id, Version::Published)?;
    put_back(conn, scope, kind, id, Some(copy))?;
    let after = document(conn, scope, kind, id, Version::Published)?;
    if before != after {
        let parts = part_of(kind).map(|(e, _, _)| e.kind);
        logged_publication(conn, scope, ctx, kind, parts, id, ChangeAction::Publish, before, after)?;
    }
    Ok(())
}

/// Takes the live document `id` of `kind` off the site (see
/// [`PublishAction::Unpublish`]).
pub(crate) fn unpublish_in(conn: &Conn, ctx: &ChangeContext, scope: &Scope, kind: EntityKind, id: &str) -> Result<()> {
    let noun = document_kind(kind)?;
    let status = status_of(conn, scope, kind, id)?;
    if document(conn, scope, kind, id, Version::Published)?.is_none() {
        return Err(StoreError::conflict(None, format!("{noun} {id} is not published")));
    }
    match (status, root_of(kind).and_then(|(_, _, withdrawn)| withdrawn)) {
        (Some(status), Some(withdrawn)) if status == "published" => {
            with_record!(kind, |T| set_status::<T>(conn, ctx, scope, id, withdrawn), else Ok(()))
        }
        _ => unpublish_document(conn, ctx, scope, kind, id).map(drop),
    }
}

/// Writes `published`, a record of a document's copy (the published one,
/// or a release's), over its working record: a revision like any other. A
/// working record archived by itself is restored first; one archived with
/// something else is a conflict naming it; one that never was is made.
pub(crate) fn write_back<T: Record>(conn: &Conn, ctx: &ChangeContext, scope: &Scope, published: &Value) -> Result<()> {
    let mut target: T = serde_json::from_value(published.clone())?;
    let id = target.id().to_string();
    if load_live::<T>(conn, scope, &id)?.is_none() {
        let table = T::ENTITY.table;
        let archive: Option<(String, String)> = db::query_as(format!(
            "SELECT a.id, a.entity_id FROM {table} t JOIN archives a ON a.id = t.archive_id AND a.site_id = t.site_id
             AND a.env = t.env WHERE t.id = ?1 AND t.site_id = ?2 AND t.env = ?3"
        ))
        .bind(&id)
        .bind_scope(scope)
        .fetch_optional(conn)?;
        match archive {
            Some((archive, root)) if root == id => {
                restore_in(conn, ctx, scope, std::slice::from_ref(&archive), None)?;
            }
            Some((archive, root)) => {
                return Err(StoreError::conflict(
                    None,
                    format!(
                        "{} {id} was archived along with {root} (archive {archive}); restore that first",
                        T::ENTITY.noun
                    ),
                ));
            }
            // Never made outside a release: it is made now.
            None => return create(conn, ctx, scope, &target),
        }
    }
    let mut current =
        load_to_change::<T>(conn, scope, &id)?.ok_or_else(|| StoreError::not_found(T::ENTITY.noun, &id))?;
    target.stamp_as(&mut current);
    if target != current {
        write_version(conn, scope, ctx, &current, &mut target, ChangeAction::Revert)?;
    }
    Ok(())
}

/// Gives up the draft of the live document `id` of `kind` (see
/// [`PublishAction::Discard`]).
fn discard_in(conn: &Conn, ctx: &ChangeContext, scope: &Scope, kind: EntityKind, id: &str) -> Result<()> {
    let noun = document_kind(kind)?;
    document(conn, scope, kind, id, Version::Working)?.ok_or_else(|| StoreError::not_found(noun, id))?;
    let Some(published) = document(conn, scope, kind, id, Version::Published)? else {
        return Err(StoreError::conflict(
            None,
            format!(
                "{noun} {id} was never published, so it has no published version to go back to; archive it instead"
            ),
        ));
    };
    // Writes made here change the draft only: it is already what is published.
    let ctx = &ChangeContext { publishing: Publishing::ByStatus, ..ctx.clone() };
    write_document(conn, ctx, scope, kind, id, &published)
}

/// Makes the working copy of the document `id` of `kind` what `copy` (a
/// document as [`document`] reads it) holds, record by record, each write
/// logged: parts it lacks are archived, parts archived since are restored,
/// records it has that never were are made.
pub(crate) fn write_document(
    conn: &Conn,
    ctx: &ChangeContext,
    scope: &Scope,
    kind: EntityKind,
    id: &str,
    copy: &Value,
) -> Result<()> {
    with_record!(kind, |T| write_back::<T>(conn, ctx, scope, &copy["record"])?, else {});
    let Some((part, _, column)) = part_of(kind) else { return Ok(()) };
    let kept: Vec<&str> = copy["parts"].as_array().into_iter().flatten().filter_map(|p| p["id"].as_str()).collect();
    let sql = format!(
        "SELECT id FROM {} WHERE {column} = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL ORDER BY id",
        part.table
    );
    let live: Vec<String> = db::query_scalar(sql).bind(id).bind_scope(scope).fetch_all(conn)?;
    let added: Vec<String> = live.into_iter().filter(|p| !kept.contains(&p.as_str())).collect();
    if !added.is_empty() {
        archive_in(conn, ctx, scope, part.kind, &added, None)?;
    }
    for record in copy["parts"].as_array().into_iter().flatten() {
        with_record!(part.kind, |T| write_back::<T>(conn, ctx, scope, record)?, else {});
    }
    Ok(())
}

/// Takes what a publication of `documents` writes, in the order every write
/// of a draft takes it (on PostgreSQL), so that a person's write on another
/// replica and this one never each wait for the other: the trees' locks
/// (`record::lock_trees`, which an archive takes too), then the documents'
/// working rows, then their documents' locks, each in one order.
pub(crate) fn lock_documents(conn: &Conn, scope: &Scope, documents: &[(EntityKind, &str)]) -> Result<()> {
    if !conn.is_postgres() {
        return Ok(());
    }
    crate::record::lock_trees(conn, scope)?;
    let mut documents = documents.to_vec();
    documents.sort_by(|a, b| (a.0.as_str(), a.1).cmp(&(b.0.as_str(), b.1)));
    documents.dedup();
    for (kind, id) in &documents {
        let Some((root, _, _)) = root_of(*kind) else { continue };
        db::query(format!(
            "SELECT id FROM {} WHERE id = ?1 AND site_id = ?2 AND env = ?3 FOR NO KEY UPDATE",
            root.table
        ))
        .bind(*id)
        .bind_scope(scope)
        .fetch_all(conn)?;
        if let Some((part, _, column)) = part_of(*kind) {
            db::query(format!(
                "SELECT id FROM {} WHERE {column} = ?1 AND site_id = ?2 AND env = ?3 AND archive_id IS NULL
                 ORDER BY id FOR NO KEY UPDATE",
                part.table
            ))
            .bind(*id)
            .bind_scope(scope)
            .fetch_all(conn)?;
        }
    }
    for (kind, id) in documents {
        lock_document(conn, scope, kind, id)?;
    }
    Ok(())
}

/// What a publishing call does to each document it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublishAction {
    /// Make the draft public, parts and all; a page's or an entry's status
    /// becomes published. Logged as a `publish` change when it changed what
    /// is public.
    Publish,
    /// Take the document off the site: a page becomes unpublished, an entry
    /// a draft. Logged as an `unpublish` change holding what was public; a
    /// conflict when it is not published.
    Unpublish,
    /// Give the draft up for what is public: each record is written back as
    /// a revision (parts added since are archived, parts archived since are
    /// restored). A conflict when it was never published.
    Discard,
}

/// What a publishing call would change for one document: for a person to
/// approve, and for an editor to look at before publishing.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocumentPreview {
    /// The document's kind.
    pub entity: EntityKind,
    /// Its id.
    pub id: String,
    /// Its readable name.
    pub label: String,
    /// Where it stands now.
    pub publication: Publication,
    /// What is published against the draft, record by record and field by
    /// field (what a publish makes public, what a discard gives up).
    pub differences: Vec<Difference>,
}

/// The id of the live document of `kind` that `name` names: its id, or its
/// unique key (a page's slug, a navigation's key).
pub(crate) fn resolve(conn: &Conn, scope: &Scope, kind: EntityKind, name: &str) -> Result<String> {
    document_kind(kind)?;
    with_record!(kind, |T| Ok(find::<T>(conn, scope, name)?.id().to_string()), else Err(StoreError::not_found("record", name)))
}

/// The preview of the document `id` of `kind`, and its records' versions.
pub(crate) fn preview_in(
    conn: &Conn,
    scope: &Scope,
    kind: EntityKind,
    id: &str,
) -> Result<(DocumentPreview, Fingerprint)> {
    let noun = document_kind(kind)?;
    let working = document(conn, scope, kind, id, Version::Working)?.ok_or_else(|| StoreError::not_found(noun, id))?;
    let published = document(conn, scope, kind, id, Version::Published)?;
    let publication = match &published {
        Some(p) => Publication { published: true, changed: !same_content(&working, p) },
        None => Publication::default(),
    };
    let label =
        with_record!(kind, |T| Ok::<_, StoreError>(find::<T>(conn, scope, id)?.label()), else Ok(String::new()))?;
    let version =
        |v: &Value| (v["id"].as_str().unwrap_or_default().to_string(), v["version"].as_i64().unwrap_or_default());
    let mut fingerprint = vec![(kind, version(&working["record"]).0, version(&working["record"]).1)];
    if let Some((part, _, _)) = part_of(kind) {
        for p in working["parts"].as_array().into_iter().flatten() {
            let (id, v) = version(p);
            fingerprint.push((part.kind, id, v));
        }
    }
    let differences = differences(published.as_ref(), Some(&working));
    Ok((DocumentPreview { entity: kind, id: id.to_string(), label, publication, differences }, fingerprint))
}

impl Store {
    /// Where the live document `id` of `kind` (page, entry or navigation)
    /// stands with the public site. Its two copies are read by id and by
    /// their parts' index, so it runs as a short read, on the calling thread
    /// ([`crate::db::Db::read_short`]).
    pub async fn publication(&self, scope: &Scope, kind: EntityKind, id: &str) -> Result<Publication> {
        let (scope, id) = (scope.clone(), id.to_string());
        self.db.read_short(move |c| c.transaction(false, |c| publication_in(c, &scope, kind, &id))).await
    }

    /// Where the live document `id` of `kind` (page, entry or navigation)
    /// stands with the public site and with the site's locales
    /// ([`Store::publication`] and [`Store::translations`] in one snapshot,
    /// one short read).
    pub async fn standing(&self, scope: &Scope, kind: EntityKind, id: &str) -> Result<(Publication, Translations)> {
        let (scope, id) = (scope.clone(), id.to_string());
        self.db
            .read_short(move |c| {
                c.transaction(false, |c| {
                    Ok((publication_in(c, &scope, kind, &id)?, translations_of(c, &scope, kind, &id)?))
                })
            })
            .await
    }

    /// What publishing (or unpublishing, or discarding the drafts of) the
    /// documents of `kind` that `names` name (ids, or a page's slug, a
    /// navigation's key) would change, and the versions of their records,
    /// which the call itself checks.
    pub async fn publishing_preview(
        &self,
        scope: &Scope,
        kind: EntityKind,
        names: &[String],
    ) -> Result<(Vec<DocumentPreview>, Fingerprint)> {
        let (scope, names) = (scope.clone(), names.to_vec());
        self.db
            .read(move |c| {
                c.transaction(false, |c| {
                    let (mut previews, mut fingerprint) = (Vec::new(), Vec::new());
                    for name in &names {
                        let (preview, versions) = preview_in(c, &scope, kind, &resolve(c, &scope, kind, name)?)?;
                        previews.push(preview);
                        fingerprint.extend(versions);
                    }
                    Ok((previews, fingerprint))
                })
            })
            .await
    }

    /// The id of the translation into `locale` of the document of `kind`
    /// that `name` names (an id, a page's slug, a navigation's key); `None`
    /// when it has none in that locale.
    pub async fn translation_of(
        &self,
        scope: &Scope,
        kind: EntityKind,
        name: &str,
        locale: &str,
    ) -> Result<Option<String>> {
        let (scope, name, locale) = (scope.clone(), name.to_string(), locale.to_string());
        self.db
            .read(move |c| {
                let id = resolve(c, &scope, kind, &name)?;
                Ok(crate::locales::translation_in(c, &scope, &id, &locale, Version::Working)?.map(|t| t.id))
            })
            .await
    }

    /// Does `action` to each document of `kind` that `names` name, in one
    /// transaction; with `expected`, refuses (a conflict, changing nothing)
    /// unless their records are at the versions of that preview. Answers
    /// where each stands after.
    pub async fn publishing(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        action: PublishAction,
        kind: EntityKind,
        names: &[String],
        expected: Option<&Fingerprint>,
    ) -> Result<Vec<Publication>> {
        let (ctx, scope, names, expected) = (ctx.clone(), scope.clone(), names.to_vec(), expected.cloned());
        let act = match action {
            PublishAction::Publish => publish_in,
            PublishAction::Unpublish => unpublish_in,
            PublishAction::Discard => discard_in,
        };
        self.db
            .write(move |c| {
                let ids = names.iter().map(|n| resolve(c, &scope, kind, n)).collect::<Result<Vec<_>>>()?;
                // Before anything is read, in a draft write's order: the
                // versions checked are the ones copied.
                let documents: Vec<(EntityKind, &str)> = ids.iter().map(|id| (kind, id.as_str())).collect();
                lock_documents(c, &scope, &documents)?;
                if let Some(expected) = &expected {
                    let mut now = Vec::new();
                    for id in &ids {
                        now.extend(preview_in(c, &scope, kind, id)?.1);
                    }
                    if &now != expected {
                        return Err(StoreError::conflict(
                            None,
                            "the records changed since the preview; preview again and ask for a new approval",
                        ));
                    }
                }
                ids.iter()
                    .map(|id| {
                        act(c, &ctx, &scope, kind, id)?;
                        publication_in(c, &scope, kind, id)
                    })
                    .collect()
            })
            .await
    }

    /// [`Store::publishing`] of one live document (page, entry or
    /// navigation, by id or unique key), unchecked.
    pub async fn publishing_one(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        action: PublishAction,
        kind: EntityKind,
        name: &str,
    ) -> Result<Publication> {
        let mut done = self.publishing(ctx, scope, action, kind, &[name.to_string()], None).await?;
        Ok(done.remove(0))
    }
}
