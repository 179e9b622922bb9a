//! Read, create, change, move and archive the site's records — pages,
//! sections, templates, collections, entries, images, menus, agents — and
//! read their history and archive: the resource-shaped routes of REST and
//! the back-office's screens, as one actor sees them.
//!
//! Each operation asks [`authorize`] first (reading, writing or archiving
//! that kind of record), then runs in the actor's site and environment and
//! logs its changes as theirs. The list of operations is one table (the
//! `operations!` invocation below): a new kind of record adds its lines
//! there, and every surface has it, decided the same way.

use crate::{Actor, AppResult, Permission, authorize};
use quire_core::input::*;
use quire_core::model::*;
use quire_store::Store;
pub use quire_store::{
    ChangeFilter, ChangeSummary, DocumentPreview, EntryFilter, EntryView, Listing, PageFilter, Publication,
    PublishAction, StoredMessage, Suggestion,
};
/// What the approvals and tokens use cases answer, for the surfaces that
/// show it: a destructive call waiting for a person, a token (never its
/// secret).
pub use quire_store::{Confirmation, TokenInfo};

/// The site's records as one actor may read and change them.
#[derive(Clone)]
pub struct Content {
    store: Store,
    actor: Actor,
}

/// A list of the record `found` by its key, if its key is `key`: what a
/// list filtered by a unique key answers (one record or none).
fn keyed<T>(found: AppResult<T>, key_of: impl Fn(&T) -> &str, key: &str) -> AppResult<Listing<T>> {
    let items = match found {
        Ok(record) if key_of(&record) == key => vec![record],
        Ok(_) => Vec::new(),
        Err(e) if e.failure == crate::error::Failure::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    Ok(Listing { items, next_cursor: None })
}

impl Content {
    /// One page of section templates, or (with `key`) the one with that key.
    pub async fn templates_keyed(
        &self,
        key: Option<&str>,
        limit: u32,
        cursor: Option<&str>,
    ) -> AppResult<Listing<SectionTemplate>> {
        match key {
            Some(key) => keyed(self.template(key).await, |t| &t.key, key),
            None => self.templates(limit, cursor).await,
        }
    }

    /// One page of collections, or (with `slug`) the one with that slug.
    pub async fn collections_keyed(
        &self,
        slug: Option<&str>,
        limit: u32,
        cursor: Option<&str>,
    ) -> AppResult<Listing<Collection>> {
        match slug {
            Some(slug) => keyed(self.collection(slug).await, |c| &c.slug, slug),
            None => self.collections(limit, cursor).await,
        }
    }

    /// One page of menus, or (with `key`) the one with that key.
    pub async fn navigations_keyed(
        &self,
        key: Option<&str>,
        limit: u32,
        cursor: Option<&str>,
    ) -> AppResult<Listing<Navigation>> {
        match key {
            Some(key) => keyed(self.navigation(key).await, |n| &n.key, key),
            None => self.navigations(limit, cursor).await,
        }
    }

    /// The records of `actor`'s site and environment, in `store`.
    pub fn new(store: Store, actor: Actor) -> Self {
        Self { store, actor }
    }

    /// Who acts.
    pub fn actor(&self) -> &Actor {
        &self.actor
    }

    /// The store the records are kept in.
    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// Archives records of `kind` with what goes along (sections of a
    /// page, items of a menu); answers the archive of each.
    pub async fn archive(&self, kind: EntityKind, ids: &[String]) -> AppResult<Vec<Archive>> {
        authorize(&self.actor, Permission::Delete(kind))?;
        Ok(self.store.archive(&self.actor.change_context(), &self.actor.scope, kind, ids).await?)
    }

    /// Archives one record of `kind`.
    pub async fn archive_one(&self, kind: EntityKind, id: String) -> AppResult<Archive> {
        let mut archives = self.archive(kind, &[id]).await?;
        Ok(archives.remove(0))
    }

    /// Archives the record of `kind` that `name` names — its id, or a
    /// template's or menu's key, a collection's slug — with what goes
    /// along.
    pub async fn archive_named(&self, kind: EntityKind, name: &str) -> AppResult<Archive> {
        authorize(&self.actor, Permission::Delete(kind))?;
        let scope = &self.actor.scope;
        let id = match kind {
            EntityKind::SectionTemplate => self.store.template(scope, name).await?.id,
            EntityKind::Collection => self.store.collection(scope, name).await?.id,
            EntityKind::Navigation => self.store.navigation(scope, name).await?.id,
            _ => name.to_string(),
        };
        let mut archives = self.store.archive(&self.actor.change_context(), scope, kind, &[id]).await?;
        Ok(archives.remove(0))
    }

    /// Where a document (a page, an entry, a menu; by id, or a page's slug
    /// or a menu's key) stands with the public site: published or not,
    /// changed since or not.
    pub async fn publication(&self, kind: EntityKind, name: &str) -> AppResult<Publication> {
        authorize(&self.actor, Permission::Read)?;
        let mut previews = self.store.publishing_preview(&self.actor.scope, kind, &[name.to_string()]).await?.0;
        Ok(previews.remove(0).publication)
    }

    /// What publishing a document would change, record by record and field
    /// by field.
    pub async fn publishing_preview(&self, kind: EntityKind, name: &str) -> AppResult<DocumentPreview> {
        authorize(&self.actor, Permission::Read)?;
        let mut previews = self.store.publishing_preview(&self.actor.scope, kind, &[name.to_string()]).await?.0;
        Ok(previews.remove(0))
    }

    /// Publishes a document as its draft is now, parts and all.
    pub async fn publish(&self, kind: EntityKind, name: &str) -> AppResult<Publication> {
        self.publishing(PublishAction::Publish, Permission::Publish(kind), kind, name).await
    }

    /// Takes a document off the public site.
    pub async fn unpublish(&self, kind: EntityKind, name: &str) -> AppResult<Publication> {
        self.publishing(PublishAction::Unpublish, Permission::Publish(kind), kind, name).await
    }

    /// Gives up a document's draft: it becomes what is published again.
    pub async fn discard_draft(&self, kind: EntityKind, name: &str) -> AppResult<Publication> {
        // It may archive parts added since and restore parts archived since.
        self.publishing(PublishAction::Discard, Permission::Delete(kind), kind, name).await
    }

    async fn publishing(
        &self,
        action: PublishAction,
        permission: Permission<'_>,
        kind: EntityKind,
        name: &str,
    ) -> AppResult<Publication> {
        authorize(&self.actor, permission)?;
        Ok(self.store.publishing_one(&self.actor.change_context(), &self.actor.scope, action, kind, name).await?)
    }

    /// Adds a section to a page (not found when the page is not).
    pub async fn create_section(&self, page_id: &str, input: NewSection) -> AppResult<PageSection> {
        authorize(&self.actor, Permission::Write(EntityKind::Section))?;
        self.store.page(&self.actor.scope, page_id).await?;
        Ok(self.store.create_section(&self.actor.change_context(), &self.actor.scope, page_id, input).await?)
    }

    /// The jobs working on an image, newest first; not found, rather than
    /// none, when the image is not.
    pub async fn jobs_of(&self, image_id: &str) -> AppResult<Vec<quire_store::Job>> {
        authorize(&self.actor, Permission::Read)?;
        self.store.image(&self.actor.scope, image_id).await?;
        Ok(self.store.jobs_of(&self.actor.scope, image_id).await?)
    }

    /// The chat sessions of the actor (`all`: every person's, for admins),
    /// newest first.
    pub async fn sessions(&self, all: bool, limit: u32, cursor: Option<&str>) -> AppResult<Listing<AgentSession>> {
        authorize(&self.actor, if all { Permission::Administer } else { Permission::Read })?;
        let actor = (!all).then_some(self.actor.id.as_str());
        Ok(self.store.sessions(&self.actor.scope, actor, limit, cursor).await?)
    }

    /// A chat session the actor may see: their own, or any for admins.
    pub async fn session(&self, id: &str) -> AppResult<AgentSession> {
        authorize(&self.actor, Permission::Read)?;
        let session = self.store.session(&self.actor.scope, id).await?;
        authorize(&self.actor, Permission::SeeSession { owner: &session.actor, session: id })?;
        Ok(session)
    }

    /// The session a chat message continues, when it names one: one the
    /// actor may see, as [`Content::session`]; none starts a new one.
    pub async fn continued_session(&self, id: Option<&str>) -> AppResult<Option<AgentSession>> {
        match id {
            Some(id) => self.session(id).await.map(Some),
            None => authorize(&self.actor, Permission::Read).map(|()| None),
        }
    }

    /// The messages of a chat session the actor may see.
    pub async fn session_messages(&self, id: &str) -> AppResult<(AgentSession, Vec<StoredMessage>)> {
        let session = self.session(id).await?;
        Ok((session, self.store.session_messages(&self.actor.scope, id).await?))
    }

    /// The site's locales, the default first.
    pub async fn locales(&self) -> AppResult<Vec<quire_core::model::SiteLocale>> {
        authorize(&self.actor, Permission::Read)?;
        Ok(self.store.site_locales(&self.actor.scope.site_id).await?)
    }

    /// Where document `id` of `kind` stands in each of the site's locales.
    pub async fn translations(&self, kind: EntityKind, id: &str) -> AppResult<quire_store::Translations> {
        authorize(&self.actor, Permission::Read)?;
        Ok(self.store.translations(&self.actor.scope, kind, id).await?)
    }

    /// The agents the actor may see (admins: all of them).
    pub async fn agents(&self) -> AppResult<Vec<Agent>> {
        authorize(&self.actor, Permission::Read)?;
        let agents = self.store.agents(&self.actor.scope).await?;
        let who = self.actor.principal();
        Ok(agents
            .into_iter()
            .filter(|a| quire_core::access::authorize(&who, Permission::SeeAgent(a)).is_ok())
            .collect())
    }

    /// An agent the actor may see, by alias or id.
    pub async fn agent(&self, id_or_alias: &str) -> AppResult<Agent> {
        authorize(&self.actor, Permission::Read)?;
        let agent = self.store.agent(&self.actor.scope, id_or_alias).await?;
        authorize(&self.actor, Permission::SeeAgent(&agent))?;
        Ok(agent)
    }
}

/// Declares operations that decide one permission and call the store
/// method of the same name in the actor's scope: `read` ones with the
/// scope, `write` ones with the actor's change context and the scope.
macro_rules! operations {
    ($($(#[$doc:meta])* $kind:ident($permission:expr) $name:ident($($arg:ident: $ty:ty),*) -> $out:ty;)*) => {
        impl Content {
            $(
                $(#[$doc])*
                pub async fn $name(&self, $($arg: $ty),*) -> AppResult<$out> {
                    authorize(&self.actor, $permission)?;
                    operations!(@call $kind self $name($($arg),*))
                }
            )*
        }
    };
    (@call read $self:ident $name:ident($($arg:ident),*)) => {
        Ok($self.store.$name(&$self.actor.scope, $($arg),*).await?)
    };
    (@call write $self:ident $name:ident($($arg:ident),*)) => {
        Ok($self.store.$name(&$self.actor.change_context(), &$self.actor.scope, $($arg),*).await?)
    };
}

use EntityKind as K;
use Permission::{Administer, Read, Write};

operations! {
    /// One page of pages.
    read(Read) pages(filter: &PageFilter, limit: u32, cursor: Option<&str>) -> Listing<Page>;
    /// A page by id.
    read(Read) page(id: &str) -> Page;
    /// A page by slug.
    read(Read) page_by_slug(slug: &str) -> Page;
    /// Creates a page.
    write(Write(K::Page)) create_page(input: NewPage) -> Page;
    /// Changes a page.
    write(Write(K::Page)) update_page(id: &str, patch: PagePatch) -> Page;
    /// Moves a page among its siblings.
    write(Write(K::Page)) shift_page(id: &str, by: i64) -> ();
    /// Moves a page to a place among its siblings, in one transaction.
    write(Write(K::Page)) move_page(id: &str, place: Place) -> ();

    /// One page of a page's sections, in order.
    read(Read) sections(page_id: &str, limit: u32, cursor: Option<&str>) -> Listing<PageSection>;
    /// A section.
    read(Read) section(id: &str) -> PageSection;
    /// Changes a section.
    write(Write(K::Section)) update_section(id: &str, patch: SectionPatch) -> PageSection;
    /// Moves a section within its page.
    write(Write(K::Section)) shift_section(id: &str, by: i64) -> ();
    /// Moves a section to a place on its page, in one transaction.
    write(Write(K::Section)) move_section(id: &str, place: Place) -> ();

    /// One page of section templates.
    read(Read) templates(limit: u32, cursor: Option<&str>) -> Listing<SectionTemplate>;
    /// A template by key or id.
    read(Read) template(id_or_key: &str) -> SectionTemplate;
    /// Creates a template (editors and admins).
    write(Write(K::SectionTemplate)) create_template(input: NewTemplate) -> SectionTemplate;
    /// Changes a template.
    write(Write(K::SectionTemplate)) update_template(id: &str, patch: TemplatePatch) -> SectionTemplate;

    /// One page of collections.
    read(Read) collections(limit: u32, cursor: Option<&str>) -> Listing<Collection>;
    /// A collection by slug or id.
    read(Read) collection(id_or_slug: &str) -> Collection;
    /// Creates a collection (editors and admins).
    write(Write(K::Collection)) create_collection(input: NewCollection) -> Collection;
    /// Changes a collection.
    write(Write(K::Collection)) update_collection(id: &str, patch: CollectionPatch) -> Collection;

    /// One page of a collection's entries.
    read(Read) entries(collection: &str, filter: &EntryFilter, limit: u32, cursor: Option<&str>) -> Listing<Entry>;
    /// One page of a collection's entries as a list shows them.
    read(Read) entry_views(collection: &str, filter: &EntryFilter, limit: u32, cursor: Option<&str>) -> Listing<EntryView>;
    /// The same page with each entry as the JSON text it serializes to (what REST answers).
    read(Read) entry_views_json(collection: &str, filter: &EntryFilter, limit: u32, cursor: Option<&str>) -> Listing<String>;
    /// An entry.
    read(Read) entry(id: &str) -> Entry;
    /// Adds an entry to a collection.
    write(Write(K::Entry)) create_entry(collection: &str, input: NewEntry) -> Entry;
    /// Changes an entry.
    write(Write(K::Entry)) update_entry(id: &str, patch: EntryPatch) -> Entry;

    /// One page of images, by processing state.
    read(Read) images(status: Option<ImageStatus>, limit: u32, cursor: Option<&str>) -> Listing<Image>;
    /// Images whose name, alt text or caption match.
    read(Read) search_images(query: &str, limit: u32) -> Vec<Image>;
    /// An image.
    read(Read) image(id: &str) -> Image;
    /// Records an image from a URL or a stored file.
    write(Write(K::Image)) create_image(input: NewImage) -> Image;
    /// Changes an image's text.
    write(Write(K::Image)) update_image(id: &str, patch: ImagePatch) -> Image;
    /// A background job.
    read(Read) job(id: &str) -> quire_store::Job;

    /// One page of menus.
    read(Read) navigations(limit: u32, cursor: Option<&str>) -> Listing<Navigation>;
    /// A menu by key or id.
    read(Read) navigation(id_or_key: &str) -> Navigation;
    /// Creates a menu (editors and admins).
    write(Write(K::Navigation)) create_navigation(input: NewNavigation) -> Navigation;
    /// Changes a menu.
    write(Write(K::Navigation)) update_navigation(id: &str, patch: NavigationPatch) -> Navigation;
    /// One page of a menu's items under a parent (none: the top level).
    read(Read) nav_items(navigation: &str, parent_id: Option<&str>, limit: u32, cursor: Option<&str>) -> Listing<NavItem>;
    /// A menu item.
    read(Read) nav_item(id: &str) -> NavItem;
    /// Adds an item to a menu.
    write(Write(K::NavItem)) create_nav_item(navigation: &str, input: NewNavItem) -> NavItem;
    /// Changes a menu item.
    write(Write(K::NavItem)) update_nav_item(id: &str, patch: NavItemPatch) -> NavItem;
    /// Moves a menu item among its siblings.
    write(Write(K::NavItem)) shift_nav_item(id: &str, by: i64) -> ();
    /// Moves a menu item to a place among its siblings, in one transaction.
    write(Write(K::NavItem)) move_nav_item(id: &str, place: Place) -> ();

    /// Pages a menu item could point at.
    read(Read) page_suggestions(limit: u32) -> Vec<Suggestion>;
    /// Entries a menu item could point at.
    read(Read) entry_suggestions(collections: u32, per_collection: u32) -> Vec<Suggestion>;
    /// Images a menu item could point at.
    read(Read) image_suggestions(limit: u32) -> Vec<Suggestion>;

    /// Creates an agent (admins).
    write(Administer) create_agent(input: NewAgent) -> Agent;
    /// Changes an agent (admins), if it is still at `expected_version`.
    write(Administer) update_agent(id_or_alias: &str, patch: &AgentPatch, expected_version: Option<i64>) -> Agent;

    /// One page of the change log.
    read(Read) changes(filter: &ChangeFilter, limit: u32, cursor: Option<&str>) -> Listing<Change>;
    /// One page of the change log as a list shows it.
    read(Read) change_summaries(filter: &ChangeFilter, limit: u32, cursor: Option<&str>) -> Listing<ChangeSummary>;
    /// A change.
    read(Read) change(id: i64) -> Change;
    /// One page of archives, of one kind or all.
    read(Read) archives(entity: Option<EntityKind>, limit: u32, cursor: Option<&str>) -> Listing<Archive>;
    /// An archive.
    read(Read) archive_record(id: &str) -> Archive;

    /// An entry by its collection (slug or id) and its own slug.
    read(Read) entry_by_slug(collection: &str, slug: &str) -> Entry;
}
