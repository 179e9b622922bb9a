//! `/api/v1/navigations` and their items (`/api/v1/nav-items/{id}`).

use quire_core::input::{NavItemPatch, NavigationPatch, NewNavItem, NewNavigation};
use quire_core::model::{NavItem, Navigation};

super::list_query! {
    /// Filters of the item list.
    ItemQuery {
        /// Only children of this item.
        parent_id: Option<String>,
    }
}

super::list_query! {
    /// Filters of the navigation list.
    NavigationQuery {
        /// Only the navigation with this key.
        key: Option<String>,
    }
}

super::record_handlers! {
    tag = "navigation", item = "/api/v1/navigations/{key}" ("key": "Navigation key or id");

    /// Lists navigations.
    list: get "/api/v1/navigations" "listNavigations" (q: NavigationQuery)
        => navigations_keyed(q.key.as_deref()) -> [Navigation] "One page of navigations";
    /// Creates a navigation (editors and admins).
    create: post "/api/v1/navigations" "createNavigation"
        => create_navigation(NewNavigation) -> Navigation "The created navigation" [409, 422];
    /// Reads a navigation by key or id.
    read: get "getNavigation" => navigation -> Navigation "The navigation";
    /// Changes a navigation.
    update: patch "updateNavigation" => update_navigation(NavigationPatch) -> Navigation "The changed navigation";
    /// Archives a navigation with its items.
    archive: delete "archiveNavigation" => Navigation "The archive holding the navigation and its items";

    tag = "navigation", item = "/api/v1/nav-items/{id}" ("id": "Nav item id");

    /// Lists a navigation's items (flat, in order; parentId tells the nesting).
    list_items: get "/api/v1/navigations/{key}/items" ("key": "Navigation key or id") "listNavItems" (q: ItemQuery)
        => nav_items(q.parent_id.as_deref()) -> [NavItem] "One page of the navigation's items";
    /// Adds an item; its target (page, entry or image) must exist.
    create_item: post "/api/v1/navigations/{key}/items" ("key": "Navigation key or id") "createNavItem"
        => create_nav_item(NewNavItem) -> NavItem "The created item" [404, 409, 422];
    /// Reads a nav item.
    read_item: get "getNavItem" => nav_item -> NavItem "The item";
    /// Changes a nav item.
    update_item: patch "updateNavItem" => update_nav_item(NavItemPatch) -> NavItem "The changed item";
    /// Archives a nav item with its children.
    archive_item: delete "archiveNavItem" => NavItem "The archive holding the item and its children";
}
