//! `/api/v1/collections` and their entries (`/api/v1/entries/{id}`); posts
//! are the entries of a posts collection such as `blog`.

use crate::auth::Records;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{ApiPath, ApiQuery};
use crate::json::JsonList;
use crate::routes::{ListResponse, Paging};
use quire_core::input::{CollectionPatch, EntryPatch, NewCollection, NewEntry};
use quire_core::model::{Collection, Entry, EntryStatus};
use quire_store::{EntryFilter, EntryView};

super::list_query! {
    /// Filters of entry lists.
    EntryQuery {
        /// Only the entry with this slug.
        slug: Option<String>,
        /// Only entries with this status.
        status: Option<EntryStatus>,
        /// Only entries in this category.
        category: Option<String>,
        /// Only entries with this tag.
        tag: Option<String>,
        /// Only entries with no translation into this locale (a tag of the site's).
        missing_locale: Option<String>,
    }
}

impl From<EntryQuery> for EntryFilter {
    fn from(q: EntryQuery) -> Self {
        EntryFilter {
            slug: q.slug,
            status: q.status,
            category: q.category,
            tag: q.tag,
            missing_locale: q.missing_locale,
        }
    }
}

super::list_query! {
    /// Filters of the collection list.
    CollectionQuery {
        /// Only the collection with this slug.
        slug: Option<String>,
    }
}

super::record_handlers! {
    tag = "collections", item = "/api/v1/collections/{slug}" ("slug": "Collection slug or id");

    /// Lists collections.
    list: get "/api/v1/collections" "listCollections" (q: CollectionQuery)
        => collections_keyed(q.slug.as_deref()) -> [Collection] "One page of collections";
    /// Creates a collection (editors and admins).
    create: post "/api/v1/collections" "createCollection"
        => create_collection(NewCollection) -> Collection "The created collection" [409, 422];
    /// Reads a collection by slug or id.
    read: get "getCollection" => collection -> Collection "The collection";
    /// Changes a collection's name or fields.
    update: patch "updateCollection" => update_collection(CollectionPatch) -> Collection "The changed collection";
    /// Archives a collection with all its entries.
    archive: delete "archiveCollection" => Collection "The archive holding the collection and its entries";

    tag = "entries", item = "/api/v1/entries/{id}" ("id": "Entry id");

    mount list_entries: get "/api/v1/collections/{slug}/entries";
    /// Creates an entry (draft unless given); content is validated against the collection's fields.
    create_entry: post "/api/v1/collections/{slug}/entries" ("slug": "Collection slug or id") "createEntry"
        => create_entry(NewEntry) -> Entry "The created entry" [404, 409, 422];
    /// Reads an entry.
    read_entry: get "getEntry" => entry -> Entry "The entry";
    /// Changes an entry; content merges; publishing sets publishedAt once.
    update_entry: patch "updateEntry" => update_entry(EntryPatch) -> Entry "The changed entry";
    /// Archives an entry.
    archive_entry: delete "archiveEntry" => Entry "The archive holding the entry";
}

/// Lists a collection's entries, newest first.
// Each entry comes from the store as the JSON an `EntryView` serializes
// to, and the page is answered from it as it is (`JsonList`).
#[utoipa::path(get, path = "/api/v1/collections/{slug}/entries", operation_id = "listEntries", tag = "entries",
    params(("slug" = String, Path, description = "Collection slug or id"), EntryQuery), security(("bearer" = [])),
    responses((status = 200, description = "One page of the collection's entries, newest first", body = ListResponse<EntryView>), (status = 404, body = ErrorBody)))]
pub async fn list_entries(
    records: Records,
    ApiPath(collection): ApiPath<String>,
    ApiQuery(mut q): ApiQuery<EntryQuery>,
) -> ApiResult<JsonList> {
    let paging = Paging { limit: q.limit, cursor: q.cursor.take() };
    let filter = EntryFilter::from(q);
    Ok(JsonList(records.entry_views_json(&collection, &filter, paging.limit()?, paging.cursor()).await?))
}
