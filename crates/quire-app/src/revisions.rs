//! Restore a page's revision as a document: the page as it was right after
//! a change, and its sections as they were at that moment — those changed
//! since put back, those added since archived, those archived since
//! brought back from the archive.
//!
//! The change log says it all: a section's state at the revision is its
//! last change up to the revision's change. Every step is a use case of
//! its own, decided by `authorize` and logged as the actor's (so each can
//! be read and undone in History); the whole plan is read and decided
//! before the first write, and the page goes first, so a refusal of the
//! page changes nothing.

use crate::restore::restore_revision;
use crate::{Actor, AppError, AppResult, Failure, Permission, authorize};
use quire_core::model::{Change, ChangeAction, EntityKind};
use quire_store::{ChangeFilter, Scope, Store};
use quire_tools::Registry;
use serde_json::Value;
use std::collections::BTreeSet;

/// Changes read per listing while walking the log back.
const PER_READ: u32 = 200;

/// Most changes of sections walked back to the revision; a revision
/// further back than that is refused rather than read without end.
const MOST_WALKED: usize = 20_000;

/// What restoring a page's revision did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageRevision {
    /// The change that put the page back (none: the page was already so).
    pub page: Option<Change>,
    /// Sections put back as they were.
    pub sections_reverted: usize,
    /// Sections brought back from the archive.
    pub sections_restored: usize,
    /// Sections added since, archived.
    pub sections_archived: usize,
}

impl PageRevision {
    /// Whether anything changed.
    pub fn changed_anything(&self) -> bool {
        self.page.is_some() || self.sections_reverted + self.sections_restored + self.sections_archived > 0
    }
}

/// What one section needs so the page is as it was.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// Put it back to its state after this change.
    Revert(i64),
    /// Bring it back from this archive, then put it back to its state
    /// after this change.
    Restore { archive: String, revision: i64 },
    /// It was not on the page then: archive it.
    Archive(String),
}

/// The page a section snapshot belongs to.
fn page_of(snapshot: Option<&Value>) -> Option<&str> {
    snapshot?.get("pageId")?.as_str()
}

/// The ids of the sections of `page` changed after change `since`.
async fn sections_changed_since(store: &Store, scope: &Scope, page: &str, since: i64) -> AppResult<BTreeSet<String>> {
    let filter = ChangeFilter { entity: Some(EntityKind::Section), ..Default::default() };
    let mut out = BTreeSet::new();
    let (mut cursor, mut walked) = (None::<String>, 0usize);
    loop {
        let listing = store.changes(scope, &filter, PER_READ, cursor.as_deref()).await?;
        let mut reached = false;
        for change in &listing.items {
            if change.id <= since {
                reached = true;
                break;
            }
            if page_of(change.after.as_ref()).or(page_of(change.before.as_ref())) == Some(page) {
                out.insert(change.entity_id.clone());
            }
        }
        walked += listing.items.len();
        if reached {
            return Ok(out);
        }
        match listing.next_cursor {
            Some(next) if walked < MOST_WALKED => cursor = Some(next),
            Some(_) => {
                return Err(AppError::conflict(format!(
                    "more than {MOST_WALKED} changes of sections were made since change {since}; restore the page's sections one by one from History"
                )));
            }
            None => return Ok(out),
        }
    }
}

/// The last change of section `id` up to change `at` (none: it was made
/// after), publications aside (they are no revision).
async fn state_at(store: &Store, scope: &Scope, id: &str, at: i64) -> AppResult<Option<Change>> {
    let filter =
        ChangeFilter { entity: Some(EntityKind::Section), entity_id: Some(id.to_string()), ..Default::default() };
    let mut cursor = None::<String>;
    loop {
        let listing = store.changes(scope, &filter, PER_READ, cursor.as_deref()).await?;
        if let Some(c) = listing
            .items
            .iter()
            .find(|c| c.id <= at && !matches!(c.action, ChangeAction::Publish | ChangeAction::Unpublish))
        {
            return Ok(Some(c.clone()));
        }
        match listing.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(None),
        }
    }
}

/// Whether an error says the record already is at the revision asked for.
fn already_there(e: &AppError) -> bool {
    e.failure == Failure::Conflict && e.message.contains("already at that revision")
}

/// Puts the record of change `id` back to its state right after it; for a
/// page, its sections too, as they were at that moment. Another kind of
/// record is restored alone, as [`restore_revision`] does.
pub async fn restore_document_revision(registry: &Registry, actor: &Actor, id: i64) -> AppResult<PageRevision> {
    let store = &registry.services().store;
    authorize(actor, Permission::Read)?;
    let change = store.change(&actor.scope, id).await?;
    if change.entity != EntityKind::Page {
        let done = restore_revision(registry, actor, id).await?;
        return Ok(PageRevision { page: Some(done), ..Default::default() });
    }
    authorize(actor, Permission::RestoreRevision(EntityKind::Page))?;
    let scope = &actor.scope;
    let page = change.entity_id.clone();
    // The page must be live to take a revision: the store says so below,
    // before any section moves.
    store.page(scope, &page).await.map_err(|_| {
        AppError::conflict(format!("the page {page} is archived or gone; restore it from the archive first"))
    })?;

    let mut steps = Vec::new();
    for section in sections_changed_since(store, scope, &page, change.id).await? {
        let then = state_at(store, scope, &section, change.id).await?;
        let was_here = then.as_ref().is_some_and(|c| c.after.is_some() && page_of(c.after.as_ref()) == Some(&page));
        let live = store.section(scope, &section).await.is_ok();
        match (was_here, live) {
            (true, true) => steps.push(Step::Revert(then.map_or(0, |c| c.id))),
            (true, false) => {
                let holding = crate::content::Content::new(store.clone(), actor.clone())
                    .archive_holding(EntityKind::Section, &section)
                    .await?;
                // Brought back only from an archive of the section itself
                // (one that took its page along comes back with the page).
                if let Some(a) = holding.filter(|a| a.entity == EntityKind::Section) {
                    steps.push(Step::Restore { archive: a.id, revision: then.map_or(0, |c| c.id) });
                }
            }
            (false, true) => steps.push(Step::Archive(section)),
            (false, false) => {}
        }
    }
    if steps.iter().any(|s| matches!(s, Step::Revert(_) | Step::Restore { .. })) {
        authorize(actor, Permission::RestoreRevision(EntityKind::Section))?;
    }
    if steps.iter().any(|s| matches!(s, Step::Restore { .. })) {
        authorize(actor, Permission::RestoreArchive(EntityKind::Section))?;
    }
    if steps.iter().any(|s| matches!(s, Step::Archive(_))) {
        authorize(actor, Permission::Delete(EntityKind::Section))?;
    }

    let mut done = PageRevision::default();
    match restore_revision(registry, actor, id).await {
        Ok(c) => done.page = Some(c),
        Err(e) if already_there(&e) => {}
        Err(e) => return Err(e),
    }
    let ctx = actor.change_context();
    let revert = |revision: i64| async move {
        match restore_revision(registry, actor, revision).await {
            Ok(_) => Ok(true),
            Err(e) if already_there(&e) => Ok(false),
            Err(e) => Err(e),
        }
    };
    let archived: Vec<String> =
        steps.iter().filter_map(|s| if let Step::Archive(id) = s { Some(id.clone()) } else { None }).collect();
    for step in &steps {
        match step {
            Step::Revert(revision) => done.sections_reverted += usize::from(revert(*revision).await?),
            Step::Restore { archive, revision } => {
                store.restore(&ctx, scope, std::slice::from_ref(archive)).await?;
                done.sections_restored += 1;
                revert(*revision).await?;
            }
            Step::Archive(_) => {}
        }
    }
    if !archived.is_empty() {
        done.sections_archived = store.archive(&ctx, scope, EntityKind::Section, &archived).await?.len();
    }
    if !done.changed_anything() {
        return Err(AppError::conflict(format!("the page {page} and its sections are already at that revision")));
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::Content;
    use quire_core::input::{NewPage, NewSection, PagePatch, SectionPatch};
    use serde_json::json;

    fn text(body: &str) -> NewSection {
        NewSection {
            template_key: "text".into(),
            content: Some(json!({ "body": body })),
            sort_order: None,
            status: None,
            hidden: None,
        }
    }

    fn body(section: &quire_core::model::PageSection) -> &str {
        section.content["body"].as_str().unwrap_or_default()
    }

    #[tokio::test]
    async fn a_page_revision_brings_its_sections_back_as_they_were() {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let dir = std::env::temp_dir().join(format!("quire-app-revisions-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (store, scope) = quire_store::testing::demo(&dir).await.unwrap();
        let registry = Registry::new(quire_tools::Services::new(store.clone(), &dir));
        let actor = Actor { surface: quire_core::model::Surface::Web, ..Actor::local_admin(scope) };
        let content = Content::new(store.clone(), actor.clone());

        let page = content
            .create_page(NewPage { name: "Rev".into(), slug: "rev".into(), ..Default::default() })
            .await
            .unwrap();
        let a = content.create_section(&page.id, text("first words")).await.unwrap();
        let b = content.create_section(&page.id, text("kept then")).await.unwrap();
        let renamed = PagePatch { name: Some("Rev two".into()), ..Default::default() };
        content.update_page(&page.id, renamed).await.unwrap();
        let filter =
            ChangeFilter { entity: Some(EntityKind::Page), entity_id: Some(page.id.clone()), ..Default::default() };
        let revision = content.changes(&filter, 1, None).await.unwrap().items[0].id;

        // Since the revision: a section rewritten, one archived, one added, the page renamed.
        let patch = SectionPatch { content: Some(json!({ "body": "second words" })), ..Default::default() };
        content.update_section(&a.id, patch).await.unwrap();
        content.archive_one(EntityKind::Section, b.id.clone()).await.unwrap();
        let c = content.create_section(&page.id, text("added later")).await.unwrap();
        content
            .update_page(&page.id, PagePatch { name: Some("Rev three".into()), ..Default::default() })
            .await
            .unwrap();

        let done = restore_document_revision(&registry, &actor, revision).await.unwrap();
        assert!(done.page.is_some(), "{done:?}");
        assert_eq!((done.sections_reverted, done.sections_restored, done.sections_archived), (1, 1, 1), "{done:?}");
        assert_eq!(content.page(&page.id).await.unwrap().name, "Rev two");
        let sections = content.sections(&page.id, 10, None).await.unwrap().items;
        let bodies: Vec<&str> = sections.iter().map(body).collect();
        assert_eq!(bodies, ["first words", "kept then"], "the sections as they were, in order");
        assert!(content.section(&c.id).await.is_err(), "the section added since is archived");

        // Again: nothing is left to restore.
        let again = restore_document_revision(&registry, &actor, revision).await.unwrap_err();
        assert_eq!(again.failure, Failure::Conflict, "{again:?}");

        // A section's own revision is restored alone, as before.
        let section_change = content
            .changes(&ChangeFilter { entity_id: Some(a.id.clone()), ..Default::default() }, 50, None)
            .await
            .unwrap()
            .items
            .into_iter()
            .find(|c| c.after.as_ref().is_some_and(|v| v["content"]["body"] == "second words"))
            .unwrap();
        let alone = restore_document_revision(&registry, &actor, section_change.id).await.unwrap();
        assert_eq!(alone.sections_reverted + alone.sections_archived, 0);
        assert_eq!(body(&content.section(&a.id).await.unwrap()), "second words");
        std::fs::remove_dir_all(&dir).ok();
    }
}
