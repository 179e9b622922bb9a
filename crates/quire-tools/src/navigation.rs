//! Navigation tools: getNavItem, createNavItem, updateNavItem, deleteNavItem.

use crate::archive::{archive_execute, archive_preview};
use crate::catalog::{CreateNavItemArgs, DeleteNavItemArgs, GetNavItemArgs, UpdateNavItemArgs};
use crate::scope::select_one;
use crate::tool::*;
use quire_core::input::{NavItemPatch, NewNavItem};
use quire_core::model::{EntityKind, NavItem};
use serde_json::{Value, json};

/// Nav item as listed.
pub fn nav_item_json(n: &NavItem) -> Value {
    json!({
        "id": n.id, "navigationId": n.navigation_id, "parentId": n.parent_id, "label": n.label,
        "targetType": n.target_type, "targetId": n.target_id, "url": n.url, "sortOrder": n.sort_order,
        "visible": n.visible, "version": n.version,
    })
}

pub(crate) async fn get_nav_item(call: &Call<'_>, a: GetNavItemArgs) -> ToolResult {
    // label may narrow a navigation, and `all: true` with a navigation means
    // every item of it (the seed's own form); otherwise exactly one selector.
    let in_nav = a.navigation_id.is_some() && a.id.is_none();
    let sel = if in_nav && a.label.is_some() && a.all.is_none() {
        "label"
    } else if in_nav && a.label.is_none() && a.all == Some(true) {
        "navigationId"
    } else {
        select_one(&[
            ("id", a.id.is_some()),
            ("navigationId", a.navigation_id.is_some()),
            ("label", a.label.is_some()),
            ("all", a.all == Some(true)),
        ])?
        .0
    };
    let store = call.store();
    let items = match sel {
        "id" => vec![store.nav_item(call.scope(), a.id.as_deref().unwrap_or_default()).await?],
        "label" => {
            store
                .search_nav_items(call.scope(), a.navigation_id.as_deref(), a.label.as_deref().unwrap_or_default(), 100)
                .await?
        }
        "navigationId" => {
            store.nav_items(call.scope(), a.navigation_id.as_deref().unwrap_or_default(), None, 100, None).await?.items
        }
        _ => {
            let mut all = Vec::new();
            for nav in store.navigations(call.scope(), 100, None).await?.items {
                all.extend(store.nav_items(call.scope(), &nav.id, None, 100, None).await?.items);
            }
            all
        }
    };
    Ok(items_result(items.iter().map(nav_item_json).collect(), None))
}

pub(crate) async fn create_nav_item(call: &Call<'_>, a: CreateNavItemArgs) -> ToolResult {
    // Taken apart whole, so an argument added later cannot be left behind.
    let CreateNavItemArgs { navigation_id, label, target_type, target_id, url, parent_id, sort_order } = a;
    let input = NewNavItem { label, target_type, target_id, url, parent_id, sort_order, visible: None };
    let n = call.store().create_nav_item(&call.ctx.change_context(), call.scope(), &navigation_id, input).await?;
    Ok(item_result(nav_item_json(&n), format!("Added \"{}\" to the menu at position {}.", n.label, n.sort_order)))
}

pub(crate) async fn update_nav_item(call: &Call<'_>, a: UpdateNavItemArgs) -> ToolResult {
    let UpdateNavItemArgs { id, label, target_type, target_id, url, parent_id, visible, sort_order } = a;
    let patch = NavItemPatch { label, target_type, target_id, url, parent_id, sort_order, visible };
    let n = call.store().update_nav_item(&call.ctx.change_context(), call.scope(), &id, patch).await?;
    Ok(item_result(nav_item_json(&n), format!("Updated menu item \"{}\".", n.label)))
}

pub(crate) async fn delete(call: &Call<'_>, a: DeleteNavItemArgs) -> ToolResult {
    archive_execute(call, EntityKind::NavItem, &a.ids, "menu item").await
}

pub(crate) async fn preview_delete(call: &Call<'_>, a: DeleteNavItemArgs) -> Result<Preview, ToolError> {
    archive_preview(call, EntityKind::NavItem, &a.ids, "menu item").await
}
