//! Navigation tools: getNavItem, createNavItem, updateNavItem, deleteNavItem.

use crate::archive::{archive_execute, archive_preview};
use crate::args::parse;
use crate::registry::schema;
use crate::scope::select_one;
use crate::subject::Subject;
use crate::tool::*;
use quire_core::input::{NavItemPatch, NewNavItem};
use quire_core::model::{EntityKind, NavItem, NavTargetType};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// Arguments of getNavItem.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetNavItemArgs {
    /// Nav item id.
    pub id: Option<String>,
    /// List the items of this navigation (id or key, e.g. "header").
    pub navigation_id: Option<String>,
    /// Find items whose label contains this text.
    pub label: Option<String>,
    /// List the items of every navigation; with navigationId, every item of that one.
    pub all: Option<bool>,
}

/// Arguments of createNavItem.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateNavItemArgs {
    /// Navigation id or key, e.g. "header" or "footer".
    pub navigation_id: String,
    /// Text shown in the menu.
    pub label: String,
    /// What the item points at.
    pub target_type: NavTargetType,
    /// Id of the page, entry or image (for those target types).
    pub target_id: Option<String>,
    /// Link for targetType url: /path, https://..., mailto: or tel:.
    pub url: Option<String>,
    /// Parent item id, for a submenu.
    pub parent_id: Option<String>,
    /// Position among siblings (default: last).
    pub sort_order: Option<i64>,
}

/// Arguments of updateNavItem.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateNavItemArgs {
    /// Nav item id.
    pub id: String,
    /// New label.
    pub label: Option<String>,
    /// New target type.
    pub target_type: Option<NavTargetType>,
    /// New target id; null clears it.
    #[serde(default, deserialize_with = "quire_core::input::double_option")]
    #[schemars(with = "Option<String>")]
    pub target_id: Option<Option<String>>,
    /// New URL; null clears it.
    #[serde(default, deserialize_with = "quire_core::input::double_option")]
    #[schemars(with = "Option<String>")]
    pub url: Option<Option<String>>,
    /// New parent item; null moves it to the top level.
    #[serde(default, deserialize_with = "quire_core::input::double_option")]
    #[schemars(with = "Option<String>")]
    pub parent_id: Option<Option<String>>,
    /// Show or hide the item.
    pub visible: Option<bool>,
    /// Position among siblings.
    pub sort_order: Option<i64>,
}

/// Arguments of deleteNavItem.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteNavItemArgs {
    /// Nav item ids to archive (always an array); children go along.
    pub ids: Vec<String>,
}

/// Nav item as listed.
pub fn nav_item_json(n: &NavItem) -> Value {
    json!({
        "id": n.id, "navigationId": n.navigation_id, "parentId": n.parent_id, "label": n.label,
        "targetType": n.target_type, "targetId": n.target_id, "url": n.url, "sortOrder": n.sort_order,
        "visible": n.visible, "version": n.version,
    })
}

async fn get_nav_item(call: &Call<'_>, a: GetNavItemArgs) -> ToolResult {
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

async fn create_nav_item(call: &Call<'_>, a: CreateNavItemArgs) -> ToolResult {
    // Taken apart whole, so an argument added later cannot be left behind.
    let CreateNavItemArgs { navigation_id, label, target_type, target_id, url, parent_id, sort_order } = a;
    let input = NewNavItem { label, target_type, target_id, url, parent_id, sort_order, visible: None };
    let n = call.store().create_nav_item(&call.ctx.change_context(), call.scope(), &navigation_id, input).await?;
    Ok(item_result(nav_item_json(&n), format!("Added \"{}\" to the menu at position {}.", n.label, n.sort_order)))
}

async fn update_nav_item(call: &Call<'_>, a: UpdateNavItemArgs) -> ToolResult {
    let UpdateNavItemArgs { id, label, target_type, target_id, url, parent_id, visible, sort_order } = a;
    let patch = NavItemPatch { label, target_type, target_id, url, parent_id, sort_order, visible };
    let n = call.store().update_nav_item(&call.ctx.change_context(), call.scope(), &id, patch).await?;
    Ok(item_result(nav_item_json(&n), format!("Updated menu item \"{}\".", n.label)))
}

/// The navigation tools.
pub fn tools() -> Vec<Tool> {
    vec![
        Tool {
            name: "getNavItem",
            description: "Get navigation menu items by id, by navigationId (such as header), by label text or all: true. Returns { items } with parentId for nesting.",
            guidance: "navigationId accepts the key (header, footer) or the id.",
            tags: &["navigation", "nav", "menu", "link", "header", "footer", "read", "list"],
            phrases: &[
                "show the header menu",
                "what links are in the footer",
                "list menu items",
                "find the contact link",
            ],
            input_schema: schema::<GetNavItemArgs>,
            execute: |call, v| Box::pin(async move { get_nav_item(call, parse(v)?).await }),
            ..Tool::base(Category::Internal, Subject::Record(EntityKind::NavItem), Effect::ReadOnly)
        },
        Tool {
            name: "createNavItem",
            description: "Create a menu item in a navigation pointing at a page, entry, media, url or placeholder; the target must exist. Returns the item.",
            guidance: "Resolve targetId with getPage/getPost first; targetType url needs url.",
            tags: &["navigation", "nav", "menu", "link", "header", "footer", "create", "add"],
            phrases: &[
                "add a link to the menu",
                "put the pricing page in the header",
                "add a footer link",
                "new menu entry",
                "add submenu",
            ],
            input_schema: schema::<CreateNavItemArgs>,
            execute: |call, v| Box::pin(async move { create_nav_item(call, parse(v)?).await }),
            ..Tool::base(Category::Internal, Subject::Record(EntityKind::NavItem), Effect::Write)
        },
        Tool {
            name: "updateNavItem",
            description: "Update a menu item by id; parentId null moves it to the top level. Returns the item.",
            guidance: "Hide with visible: false rather than deleting.",
            tags: &["navigation", "nav", "menu", "link", "update", "edit", "rename", "reorder", "hide"],
            phrases: &[
                "rename the menu link",
                "reorder the menu",
                "hide a menu item",
                "point the link elsewhere",
                "move link to submenu",
            ],
            input_schema: schema::<UpdateNavItemArgs>,
            execute: |call, v| Box::pin(async move { update_nav_item(call, parse(v)?).await }),
            ..Tool::base(Category::Internal, Subject::Record(EntityKind::NavItem), Effect::IdempotentWrite)
        },
        Tool {
            name: "deleteNavItem",
            description: "Delete menu items by ids, archiving them with their sub-items; the first call only previews. Nothing changes until a person approves.",
            guidance: "Archives with children; visible: false hides instead.",
            tags: &["navigation", "nav", "menu", "link", "delete", "remove", "archive"],
            phrases: &["remove the link from the menu", "delete a menu item", "take blog out of the header"],
            input_schema: schema::<DeleteNavItemArgs>,
            execute: |call, v| {
                Box::pin(async move {
                    archive_execute(call, EntityKind::NavItem, &parse::<DeleteNavItemArgs>(v)?.ids, "menu item").await
                })
            },
            preview: Some(|call, v| {
                Box::pin(async move {
                    archive_preview(call, EntityKind::NavItem, &parse::<DeleteNavItemArgs>(v)?.ids, "menu item").await
                })
            }),
            ..Tool::base(Category::Internal, Subject::Record(EntityKind::NavItem), Effect::Destructive)
        },
    ]
}
