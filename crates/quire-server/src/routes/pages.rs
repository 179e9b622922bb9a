//! `/api/v1/pages`: the page tree.

use quire_core::input::{NewPage, PagePatch};
use quire_core::model::{Page, PublishStatus};
use quire_store::PageFilter;

super::list_query! {
    /// Filters of the page list.
    PageQuery {
        /// Only the page with this slug.
        slug: Option<String>,
        /// Only children of this page; `root` for root pages only.
        parent_id: Option<String>,
        /// Only pages with this status.
        status: Option<PublishStatus>,
        /// Only pages with no translation into this locale (a tag of the site's).
        missing_locale: Option<String>,
    }
}

impl From<PageQuery> for PageFilter {
    fn from(q: PageQuery) -> Self {
        PageFilter {
            slug: q.slug,
            root_only: q.parent_id.as_deref() == Some("root"),
            parent_id: q.parent_id.filter(|p| p != "root"),
            status: q.status,
            missing_locale: q.missing_locale,
        }
    }
}

super::record_handlers! {
    tag = "pages", item = "/api/v1/pages/{id}" ("id": "Page id");

    /// Lists pages in tree order (sortOrder, then creation).
    list: get "/api/v1/pages" "listPages" (q: PageQuery) => pages(&PageFilter::from(q)) -> [Page] "One page of pages in tree order";
    /// Creates a page (status draft unless given).
    create: post "/api/v1/pages" "createPage" => create_page(NewPage) -> Page "The created page" [404, 409, 422];
    /// Reads a page by id.
    read: get "getPage" => page -> Page "The page";
    /// Changes a page; meta merges (a key set to null is removed), parentId null moves it to the root.
    update: patch "updatePage" => update_page(PagePatch) -> Page "The changed page";
    /// Archives a page with its sections and child pages (restorable from `/api/v1/archive`).
    archive: delete "archivePage" => Page "The archive holding the page and what went with it";
}
