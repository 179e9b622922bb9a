//! Create, read and update for every kind of content record.
//!
//! Each write runs in one transaction: check the rules, write the row, append
//! the change-log record, commit. A write that changes nothing is not logged.

use crate::db::{self, Conn, FromRow};
use crate::log::new_id;
use crate::record::{Positioned, Record, by_key, create, find, require_live, require_to_change, write_version};
use crate::{Result, Scope, Store, StoreError};
use chrono::Utc;
use quire_core::input::*;
use quire_core::model::*;
use quire_core::templates::post_fields;
use serde_json::json;

/// A change to one record, applied inside a transaction.
pub(crate) type Edit<T> = Box<dyn FnOnce(&mut T) + Send>;

impl Store {
    /// Inserts `record` after checking it, logging a `create` change.
    pub(crate) async fn create_record<T: Record>(&self, ctx: &ChangeContext, scope: &Scope, record: T) -> Result<T> {
        self.create_record_with(ctx, scope, record, |_, _, _| Ok(())).await
    }

    /// Inserts `record` after `fill` completed it from the database (its
    /// position among siblings) and it was checked, logging a `create`
    /// change; all of it in the writer's transaction.
    pub(crate) async fn create_record_with<T: Record>(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        mut record: T,
        fill: impl FnOnce(&Conn, &Scope, &mut T) -> Result<()> + Send + 'static,
    ) -> Result<T> {
        let (ctx, scope) = (ctx.clone(), scope.clone());
        self.db
            .write(move |c| {
                fill(c, &scope, &mut record)?;
                create(c, &ctx, &scope, &record)?;
                Ok(record)
            })
            .await
    }

    /// Inserts `record` after its live siblings unless `placed` (see
    /// [`after_last`]), as [`Store::create_record_with`] does.
    async fn create_placed<T: Record + Positioned>(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        record: T,
        placed: bool,
    ) -> Result<T> {
        self.create_record_with(ctx, scope, record, move |c, scope, record| {
            if !placed {
                record.set_position(after_last(c, scope, record)?);
            }
            Ok(())
        })
        .await
    }

    /// Loads a live record, lets `change` modify it, checks and writes it,
    /// logging an `update` change with before and after.
    ///
    /// All of it runs in the writer's transaction (see `db/writer.rs`), together
    /// with concurrent writes in one group commit, where no one else can
    /// interleave: concurrent edits apply in turn and none fails for losing
    /// a race. A change that changes nothing writes and logs nothing.
    pub(crate) async fn update_record<T: Record>(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        id: &str,
        change: impl FnOnce(&mut T) -> Result<()> + Send + 'static,
    ) -> Result<T> {
        let (ctx, scope, id) = (ctx.clone(), scope.clone(), id.to_string());
        self.db.write(move |c| change_in(c, &ctx, &scope, &id, change)).await
    }

    /// [`Store::update_record`] for a document that publishes by its
    /// status: when the caller publishes that way and `publish` says the
    /// change asked for the published status, the document is published in
    /// the same transaction even if it was published already (its draft
    /// changes, this one's included, go public).
    async fn update_document<T: Record>(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        id: &str,
        publish: bool,
        change: impl FnOnce(&mut T) -> Result<()> + Send + 'static,
    ) -> Result<T> {
        let (ctx, scope, id) = (ctx.clone(), scope.clone(), id.to_string());
        self.db
            .write(move |c| {
                let record = change_in(c, &ctx, &scope, &id, change)?;
                if publish && ctx.publishing == Publishing::ByStatus {
                    crate::record::publish_document(c, &ctx, &scope, T::KIND, &id)?;
                }
                Ok(record)
            })
            .await
    }

    /// [`Store::update_record`] with a change that cannot fail (a patch).
    async fn edit_record<T: Record>(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        id: &str,
        edit: impl FnOnce(&mut T) + Send + 'static,
    ) -> Result<T> {
        self.update_record(ctx, scope, id, move |record| {
            edit(record);
            Ok(())
        })
        .await
    }

    /// Moves a record one place up (`-1`) or down (`1`) among its siblings
    /// (pages under the same parent, sections of the same page), swapping
    /// positions with the neighbour in one transaction. At the end of the
    /// list it changes nothing. Equal positions (older data) are spread out
    /// first, so the swap always shows.
    pub(crate) async fn shift<T: Record + Positioned>(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        id: &str,
        by: i64,
    ) -> Result<()> {
        if by != -1 && by != 1 {
            return Err(StoreError::invalid("by", format!("{by} is not -1 (up) or 1 (down)")));
        }
        // Read and written in one transaction: two quick moves are applied
        // one after the other, each to the order the other left.
        let (ctx, scope, id) = (ctx.clone(), scope.clone(), id.to_string());
        self.db.write(move |c| shift_in::<T>(c, &ctx, &scope, &id, by)).await
    }

    /// Moves a page one place up (`by` -1) or down (1) among its siblings.
    pub async fn shift_page(&self, ctx: &ChangeContext, scope: &Scope, id: &str, by: i64) -> Result<()> {
        self.shift::<Page>(ctx, scope, id, by).await
    }

    /// Moves a section one place up (`by` -1) or down (1) on its page.
    pub async fn shift_section(&self, ctx: &ChangeContext, scope: &Scope, id: &str, by: i64) -> Result<()> {
        self.shift::<PageSection>(ctx, scope, id, by).await
    }

    /// Moves a navigation item one place up (`by` -1) or down (1) among its
    /// siblings.
    pub async fn shift_nav_item(&self, ctx: &ChangeContext, scope: &Scope, id: &str, by: i64) -> Result<()> {
        self.shift::<NavItem>(ctx, scope, id, by).await
    }

    /// Moves a record to `place` among its siblings in one transaction.
    /// Where the positions around the new place leave room, only the record
    /// itself is written (one change-log record, so restoring its revision
    /// puts it back); where they do not, the siblings are renumbered
    /// [`GAP`] apart first, each renumbered one logged. A move to where it
    /// already is changes nothing.
    pub(crate) async fn move_to<T: Record + Positioned>(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        id: &str,
        place: Place,
    ) -> Result<()> {
        let (ctx, scope, id) = (ctx.clone(), scope.clone(), id.to_string());
        self.db.write(move |c| move_in::<T>(c, &ctx, &scope, &id, &place)).await
    }

    /// Moves a page to `place` among the pages under the same parent.
    pub async fn move_page(&self, ctx: &ChangeContext, scope: &Scope, id: &str, place: Place) -> Result<()> {
        self.move_to::<Page>(ctx, scope, id, place).await
    }

    /// Moves a section to `place` on its page.
    pub async fn move_section(&self, ctx: &ChangeContext, scope: &Scope, id: &str, place: Place) -> Result<()> {
        self.move_to::<PageSection>(ctx, scope, id, place).await
    }

    /// Moves a navigation item to `place` among the items under the same
    /// parent.
    pub async fn move_nav_item(&self, ctx: &ChangeContext, scope: &Scope, id: &str, place: Place) -> Result<()> {
        self.move_to::<NavItem>(ctx, scope, id, place).await
    }

    /// Reads one `T` with `read`: on the caller's thread when its rows stay
    /// small ([`crate::db::Db::read_short`]), else on a reader's.
    async fn read_one<T: Record>(
        &self,
        read: impl FnOnce(&crate::db::Conn) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        if T::ENTITY.small { self.db.read_short(read).await } else { self.db.read(read).await }
    }

    /// Reads a live record by id or unique key.
    pub(crate) async fn find_record<T: Record>(&self, scope: &Scope, id_or_key: &str) -> Result<T> {
        let (scope, id_or_key) = (scope.clone(), id_or_key.to_string());
        self.read_one(move |c| find::<T>(c, &scope, &id_or_key)).await
    }

    /// Reads a live record by id.
    pub(crate) async fn get_record<T: Record>(&self, scope: &Scope, id: &str) -> Result<T> {
        let (scope, id) = (scope.clone(), id.to_string());
        self.read_one(move |c| require_live::<T>(c, &scope, &id)).await
    }

    // ------------------------------------------------------------ pages

    /// Creates a page (default status draft, placed last among its siblings).
    pub async fn create_page(&self, ctx: &ChangeContext, scope: &Scope, input: NewPage) -> Result<Page> {
        let now = Utc::now();
        let placed = input.sort_order.is_some();
        let page = Page {
            id: new_id(),
            name: input.name,
            slug: input.slug,
            parent_id: input.parent_id,
            is_protected: input.is_protected.unwrap_or(false),
            meta: input.meta.unwrap_or_else(|| json!({})),
            indexing: input.indexing.unwrap_or(true),
            sort_order: input.sort_order.unwrap_or(0),
            status: input.status.unwrap_or(PublishStatus::Draft),
            version: 1,
            created_at: now,
            updated_at: now,
        };
        self.create_placed(ctx, scope, page, placed).await
    }

    /// A live page by id.
    pub async fn page(&self, scope: &Scope, id: &str) -> Result<Page> {
        self.get_record(scope, id).await
    }

    /// A live page by slug.
    pub async fn page_by_slug(&self, scope: &Scope, slug: &str) -> Result<Page> {
        let (scope, slug) = (scope.clone(), slug.to_string());
        self.read_one(move |c| by_key::<Page>(c, &scope, &slug)?.ok_or_else(|| StoreError::not_found("page", slug)))
            .await
    }

    /// Applies a patch to a page (see [`Store::update_document`]).
    pub async fn update_page(&self, ctx: &ChangeContext, scope: &Scope, id: &str, patch: PagePatch) -> Result<Page> {
        let publish = patch.status == Some(PublishStatus::Published);
        self.update_document::<Page>(ctx, scope, id, publish, move |p| {
            patch.apply(p);
            Ok(())
        })
        .await
    }

    // ------------------------------------------------------------ sections

    /// Creates a section on a page (default status draft, placed last).
    pub async fn create_section(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        page_id: &str,
        input: NewSection,
    ) -> Result<PageSection> {
        let now = Utc::now();
        let placed = input.sort_order.is_some();
        let sort_order = input.sort_order.unwrap_or(0);
        let section = PageSection {
            id: new_id(),
            page_id: page_id.to_string(),
            template_key: input.template_key,
            content: input.content.unwrap_or_else(|| json!({})),
            sort_order,
            status: input.status.unwrap_or(PublishStatus::Draft),
            hidden: input.hidden.unwrap_or(false),
            version: 1,
            created_at: now,
            updated_at: now,
        };
        self.create_placed(ctx, scope, section, placed).await
    }

    /// A live section by id.
    pub async fn section(&self, scope: &Scope, id: &str) -> Result<PageSection> {
        self.get_record(scope, id).await
    }

    /// Applies a patch to a section (content merges, then is re-validated).
    pub async fn update_section(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        id: &str,
        patch: SectionPatch,
    ) -> Result<PageSection> {
        self.edit_record::<PageSection>(ctx, scope, id, move |s| patch.apply(s)).await
    }

    // ------------------------------------------------------------ templates

    /// Creates a section template.
    pub async fn create_template(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        input: NewTemplate,
    ) -> Result<SectionTemplate> {
        let now = Utc::now();
        let template = SectionTemplate {
            id: new_id(),
            key: input.key,
            name: input.name,
            description: input.description.unwrap_or_default(),
            fields: input.fields,
            version: 1,
            created_at: now,
            updated_at: now,
        };
        self.create_record(ctx, scope, template).await
    }

    /// A live template by id or key.
    pub async fn template(&self, scope: &Scope, id_or_key: &str) -> Result<SectionTemplate> {
        self.find_record(scope, id_or_key).await
    }

    /// Applies a patch to a template.
    pub async fn update_template(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        id: &str,
        patch: TemplatePatch,
    ) -> Result<SectionTemplate> {
        let id = self.template(scope, id).await?.id;
        self.edit_record::<SectionTemplate>(ctx, scope, &id, move |t| patch.apply(t)).await
    }

    // ------------------------------------------------------------ collections

    /// Creates a collection (posts collections default to body + cover fields).
    pub async fn create_collection(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        input: NewCollection,
    ) -> Result<Collection> {
        let now = Utc::now();
        let fields = match (input.fields, input.kind) {
            (Some(f), _) => f,
            (None, CollectionKind::Posts) => post_fields(),
            (None, CollectionKind::Entries) => Vec::new(),
        };
        let collection = Collection {
            id: new_id(),
            slug: input.slug,
            name: input.name,
            kind: input.kind,
            fields,
            version: 1,
            created_at: now,
            updated_at: now,
        };
        self.create_record(ctx, scope, collection).await
    }

    /// A live collection by id or slug.
    pub async fn collection(&self, scope: &Scope, id_or_slug: &str) -> Result<Collection> {
        self.find_record(scope, id_or_slug).await
    }

    /// Applies a patch to a collection.
    pub async fn update_collection(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        id: &str,
        patch: CollectionPatch,
    ) -> Result<Collection> {
        let id = self.collection(scope, id).await?.id;
        self.edit_record::<Collection>(ctx, scope, &id, move |c| patch.apply(c)).await
    }

    // ------------------------------------------------------------ entries

    /// Creates an entry in the collection with id or slug `collection`.
    pub async fn create_entry(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        collection: &str,
        input: NewEntry,
    ) -> Result<Entry> {
        let collection = self.collection(scope, collection).await?;
        let now = Utc::now();
        let status = input.status.unwrap_or(EntryStatus::Draft);
        let entry = Entry {
            id: new_id(),
            collection_id: collection.id,
            slug: input.slug,
            title: input.title,
            content: input.content.unwrap_or_else(|| json!({})),
            status,
            author: input.author,
            category: input.category,
            tags: input.tags.unwrap_or_default(),
            excerpt: input.excerpt,
            featured_image: input.featured_image,
            published_at: (status == EntryStatus::Published).then_some(now),
            version: 1,
            created_at: now,
            updated_at: now,
        };
        self.create_record(ctx, scope, entry).await
    }

    /// A live entry by id.
    pub async fn entry(&self, scope: &Scope, id: &str) -> Result<Entry> {
        self.get_record(scope, id).await
    }

    /// A live entry by collection (id or slug) and slug.
    pub async fn entry_by_slug(&self, scope: &Scope, collection: &str, slug: &str) -> Result<Entry> {
        let collection = self.collection(scope, collection).await?;
        let (scope, slug) = (scope.clone(), slug.to_string());
        self.db
            .read(move |c| {
                let row =
                    db::query("SELECT * FROM entries WHERE collection_id = ?1 AND slug = ?2 AND site_id = ?3 AND env = ?4 AND archive_id IS NULL")
                        .bind(&collection.id)
                        .bind(&slug)
                        .bind_scope(&scope)
                        .fetch_optional(c)?;
                row.as_ref().map(Entry::from_row).transpose()?.ok_or_else(|| StoreError::not_found("entry", slug))
            })
            .await
    }

    /// Applies a patch to an entry; publishing sets publishedAt the first time.
    pub async fn update_entry(&self, ctx: &ChangeContext, scope: &Scope, id: &str, patch: EntryPatch) -> Result<Entry> {
        let publish = patch.status == Some(EntryStatus::Published);
        self.update_document::<Entry>(ctx, scope, id, publish, move |e| {
            patch.apply(e);
            if e.status == EntryStatus::Published && e.published_at.is_none() {
                e.published_at = Some(Utc::now());
            }
            Ok(())
        })
        .await
    }

    // ------------------------------------------------------------ images

    /// Records an image whose file the caller already wrote under
    /// `/uploads` (the demo seed), as completed and served as `mime`.
    /// Uploads go through [`Store::create_image_from_upload`] instead.
    pub async fn create_image(&self, ctx: &ChangeContext, scope: &Scope, input: NewImage) -> Result<Image> {
        let image = crate::records::new_image(input, ImageStatus::Completed);
        // A file put in place by the caller (the demo seed): served as the
        // type recorded here.
        let (ctx, scope) = (ctx.clone(), scope.clone());
        self.db
            .write(move |c| {
                create(c, &ctx, &scope, &image)?;
                crate::media::register_file(c, &image.url, &image.id, &image.mime)?;
                Ok(image)
            })
            .await
    }

    /// A live image by id.
    pub async fn image(&self, scope: &Scope, id: &str) -> Result<Image> {
        self.get_record(scope, id).await
    }

    /// Applies a patch to an image's metadata.
    pub async fn update_image(&self, ctx: &ChangeContext, scope: &Scope, id: &str, patch: ImagePatch) -> Result<Image> {
        self.edit_record::<Image>(ctx, scope, id, move |i| patch.apply(i)).await
    }

    // ------------------------------------------------------------ navigation

    /// Creates a navigation menu.
    pub async fn create_navigation(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        input: NewNavigation,
    ) -> Result<Navigation> {
        let now = Utc::now();
        let nav = Navigation {
            id: new_id(),
            key: input.key,
            name: input.name,
            max_items: input.max_items,
            version: 1,
            created_at: now,
            updated_at: now,
        };
        self.create_record(ctx, scope, nav).await
    }

    /// A live navigation by id or key.
    pub async fn navigation(&self, scope: &Scope, id_or_key: &str) -> Result<Navigation> {
        self.find_record(scope, id_or_key).await
    }

    /// Applies a patch to a navigation.
    pub async fn update_navigation(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        id: &str,
        patch: NavigationPatch,
    ) -> Result<Navigation> {
        let id = self.navigation(scope, id).await?.id;
        self.edit_record::<Navigation>(ctx, scope, &id, move |n| patch.apply(n)).await
    }

    /// Adds an item to the navigation with id or key `navigation`; refuses a
    /// target that does not exist and a top level beyond maxItems.
    pub async fn create_nav_item(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        navigation: &str,
        input: NewNavItem,
    ) -> Result<NavItem> {
        let nav = self.navigation(scope, navigation).await?;
        let placed = input.sort_order.is_some();
        let now = Utc::now();
        let item = NavItem {
            id: new_id(),
            navigation_id: nav.id,
            parent_id: input.parent_id,
            label: input.label,
            target_type: input.target_type,
            target_id: input.target_id,
            url: input.url,
            sort_order: input.sort_order.unwrap_or(0),
            visible: input.visible.unwrap_or(true),
            version: 1,
            created_at: now,
            updated_at: now,
        };
        self.create_record_with(ctx, scope, item, move |c, scope, item| {
            if !placed {
                item.sort_order = db::query_scalar(
                    "SELECT COUNT(*) FROM nav_items WHERE navigation_id = ?1 AND parent_id IS NOT DISTINCT FROM ?2
                     AND site_id = ?3 AND env = ?4 AND archive_id IS NULL",
                )
                .bind(&item.navigation_id)
                .bind(&item.parent_id)
                .bind_scope(scope)
                .fetch_one(c)?;
            }
            Ok(())
        })
        .await
    }

    /// A live nav item by id.
    pub async fn nav_item(&self, scope: &Scope, id: &str) -> Result<NavItem> {
        self.get_record(scope, id).await
    }

    /// Applies a patch to a nav item.
    pub async fn update_nav_item(
        &self,
        ctx: &ChangeContext,
        scope: &Scope,
        id: &str,
        patch: NavItemPatch,
    ) -> Result<NavItem> {
        self.edit_record::<NavItem>(ctx, scope, id, move |n| patch.apply(n)).await
    }
}

/// Applies `change` to the live record `id` inside `conn`'s transaction,
/// and writes and logs the result as an `update` unless it changed nothing.
fn change_in<T: Record>(
    conn: &Conn,
    ctx: &ChangeContext,
    scope: &Scope,
    id: &str,
    change: impl FnOnce(&mut T) -> Result<()>,
) -> Result<T> {
    let before = require_to_change::<T>(conn, scope, id)?;
    let mut after = before.clone();
    change(&mut after)?;
    if after == before {
        return Ok(before);
    }
    write_version(conn, scope, ctx, &before, &mut after, ChangeAction::Update)?;
    Ok(after)
}

/// Applies `changes` to live records of one kind inside `conn`'s
/// transaction (see [`change_in`]).
fn apply_edits<T: Record>(
    conn: &Conn,
    ctx: &ChangeContext,
    scope: &Scope,
    changes: Vec<(String, Edit<T>)>,
) -> Result<Vec<T>> {
    changes
        .into_iter()
        .map(|(id, edit)| {
            change_in(conn, ctx, scope, &id, |record| {
                edit(record);
                Ok(())
            })
        })
        .collect()
}

/// The place after the last of `record`'s live siblings, 0 when it has
/// none. A sibling may sit at `i64::MAX` (any order is accepted): the
/// record then stays there too.
fn after_last<T: Record + Positioned>(conn: &Conn, scope: &Scope, record: &T) -> Result<i64> {
    let max: Option<i64> = siblings_of(record, scope, "MAX(sort_order)", "").fetch_one(conn)?.try_get(0usize)?;
    Ok(max.map_or(0, |max| max.saturating_add(1)))
}

/// `SELECT {what}` over the live siblings of `record` (itself included,
/// once written), then `tail` (an ORDER BY).
fn siblings_of<T: Record + Positioned>(record: &T, scope: &Scope, what: &str, tail: &str) -> db::Query {
    let (condition, keys) = record.siblings();
    let sql = format!(
        "SELECT {what} FROM {} WHERE site_id = ?1 AND env = ?2 AND archive_id IS NULL AND {condition}{tail}",
        T::TABLE,
    );
    keys.into_iter().fold(db::query(sql).bind_scope(scope), |query, key| query.bind(key))
}

/// Swaps the record `id` with its neighbour `by` places away among its
/// siblings (see [`Store::shift`]), inside the writer's transaction.
fn shift_in<T: Record + Positioned>(conn: &Conn, ctx: &ChangeContext, scope: &Scope, id: &str, by: i64) -> Result<()> {
    let me = require_live::<T>(conn, scope, id)?;
    let siblings = siblings_of(&me, scope, "id, sort_order", " ORDER BY sort_order, id")
        .fetch_all(conn)?
        .iter()
        .map(<(String, i64)>::from_row)
        .collect::<Result<Vec<_>>>()?;
    let Some(at) = siblings.iter().position(|(s, _)| s == id) else { return Ok(()) };
    let Some(other) = at.checked_add_signed(by as isize).filter(|o| *o < siblings.len()) else { return Ok(()) };
    // New positions: the list's order with the two swapped, renumbered
    // only where a tie would hide the swap.
    let mut order: Vec<(String, i64)> = siblings.clone();
    order.swap(at, other);
    let mut changes: Vec<(String, Edit<T>)> = Vec::new();
    let ties = siblings.windows(2).any(|w| w[0].1 == w[1].1);
    if ties {
        for (n, (sid, old)) in order.iter().enumerate() {
            let n = n as i64;
            if *old != n {
                changes.push((sid.clone(), Box::new(move |r: &mut T| r.set_position(n))));
            }
        }
    } else {
        let (a, b) = (siblings[at].1, siblings[other].1);
        changes.push((siblings[at].0.clone(), Box::new(move |r: &mut T| r.set_position(b))));
        changes.push((siblings[other].0.clone(), Box::new(move |r: &mut T| r.set_position(a))));
    }
    apply_edits(conn, ctx, scope, changes)?;
    Ok(())
}

/// How far apart renumbered siblings are, so that most later moves find
/// room between two neighbours and write the moved record alone.
pub(crate) const GAP: i64 = 1024;

/// Moves the record `id` to `place` among its siblings (see
/// [`Store::move_to`]), inside the writer's transaction.
fn move_in<T: Record + Positioned>(
    conn: &Conn,
    ctx: &ChangeContext,
    scope: &Scope,
    id: &str,
    place: &Place,
) -> Result<()> {
    let me = require_live::<T>(conn, scope, id)?;
    let siblings = siblings_of(&me, scope, "id, sort_order", " ORDER BY sort_order, id")
        .fetch_all(conn)?
        .iter()
        .map(<(String, i64)>::from_row)
        .collect::<Result<Vec<_>>>()?;
    let Some(at) = siblings.iter().position(|(s, _)| s == id) else { return Ok(()) };
    let mut others = siblings;
    let (_, mine) = others.remove(at);
    let noun = T::ENTITY.noun;
    let sibling = |field: &str, other: &str| {
        if other == id {
            return Err(StoreError::invalid(field, format!("{noun} {id} cannot be placed next to itself")));
        }
        others
            .iter()
            .position(|(s, _)| s == other)
            .ok_or_else(|| StoreError::invalid(field, format!("{other} is not a live sibling of {noun} {id}")))
    };
    let to = match place {
        Place::Position(n) => {
            let n = *n as usize;
            if n > others.len() {
                let last = others.len();
                return Err(StoreError::invalid("position", format!("{n} is past the last place, {last}")));
            }
            n
        }
        Place::Before(other) => sibling("before", other)?,
        Place::After(other) => sibling("after", other)? + 1,
    };
    if to == at {
        return Ok(());
    }
    let before = to.checked_sub(1).map(|i| others[i].1);
    let after = others.get(to).map(|(_, n)| *n);
    let room = match (before, after) {
        (Some(b), Some(a)) if i128::from(a) - i128::from(b) >= 2 => Some(((i128::from(a) + i128::from(b)) / 2) as i64),
        (Some(_), Some(_)) | (None, None) => None,
        (Some(b), None) => b.checked_add(GAP),
        (None, Some(a)) => a.checked_sub(GAP),
    };
    let mut changes: Vec<(String, Edit<T>)> = Vec::new();
    match room {
        Some(n) if n != mine => changes.push((id.to_string(), Box::new(move |r: &mut T| r.set_position(n)))),
        Some(_) => {}
        None => {
            others.insert(to, (id.to_string(), mine));
            for (i, (sid, old)) in others.into_iter().enumerate() {
                let n = i as i64 * GAP;
                if old != n {
                    changes.push((sid, Box::new(move |r: &mut T| r.set_position(n))));
                }
            }
        }
    }
    apply_edits(conn, ctx, scope, changes)?;
    Ok(())
}
