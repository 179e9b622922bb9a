//! Navigation tools: getNavItem, createNavItem, updateNavItem, deleteNavItem.

use crate::archive::{archive_execute, archive_preview};
use crate::catalog::{CreateNavItemArgs, DeleteNavItemArgs, GetNavItemArgs, UpdateNavItemArgs};
use crate::locales::{self, InLocale, Overlay};
use crate::pages::created_untranslated;
use crate::scope::select_one;
use crate::tool::*;
use quire_core::input::{NavItemPatch, NewNavItem};
use quire_core::model::{EntityKind, NavItem, Translation};
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
    let in_locale = locales::asked(call, a.locale.as_deref()).await?;
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
    let mut items: Vec<Value> = items.iter().map(nav_item_json).collect();
    if let Some(l) = &in_locale {
        let mut overlay = Overlay::new(l);
        for item in &mut items {
            overlay.nav_item(call, item).await?;
        }
    }
    Ok(items_result(items, None))
}

pub(crate) async fn create_nav_item(call: &Call<'_>, a: CreateNavItemArgs) -> ToolResult {
    // Taken apart whole, so an argument added later cannot be left behind.
    let CreateNavItemArgs { navigation_id, label, target_type, target_id, url, parent_id, sort_order, locale } = a;
    let in_locale = locales::asked(call, locale.as_deref()).await?;
    let input = NewNavItem { label, target_type, target_id, url, parent_id, sort_order, visible: None };
    let n = call.store().create_nav_item(&call.ctx.change_context(), call.scope(), &navigation_id, input).await?;
    let msg = format!("Added \"{}\" to the menu at position {}.", n.label, n.sort_order);
    let Some(l) = in_locale else { return Ok(item_result(nav_item_json(&n), msg)) };
    let written =
        translate_label(call, &l, &n, &n.label).await.map_err(|e| created_untranslated(e, "menu item", &n.id, &l))?;
    let msg = format!("{msg} Its menu's {} translation holds the same label, as a draft.", l.tag);
    nav_item_in(call, &l, &n, &written, msg).await
}

/// Writes `label` as menu item `item`'s label in its navigation's
/// translation into locale `l`.
async fn translate_label(call: &Call<'_>, l: &InLocale, item: &NavItem, label: &str) -> Result<Translation, ToolError> {
    locales::write(call, l, EntityKind::Navigation, &item.navigation_id, |fields| {
        let items = fields.entry("items").or_insert_with(|| json!({}));
        if let Some(items) = items.as_object_mut() {
            items.insert(item.id.clone(), json!({ "label": label }));
        }
    })
    .await
}

/// The answer of a write in locale `l`: menu item `item` as that locale
/// reads it, with the translation of its navigation written.
async fn nav_item_in(call: &Call<'_>, l: &InLocale, item: &NavItem, written: &Translation, msg: String) -> ToolResult {
    let mut out = nav_item_json(item);
    Overlay::new(l).nav_item(call, &mut out).await?;
    out["translation"] = locales::translation_json(written);
    Ok(item_result(out, msg))
}

pub(crate) async fn update_nav_item(call: &Call<'_>, a: UpdateNavItemArgs) -> ToolResult {
    let UpdateNavItemArgs { id, label, target_type, target_id, url, parent_id, visible, sort_order, locale } = a;
    if let Some(l) = locales::asked(call, locale.as_deref()).await? {
        let given = [
            ("targetType", target_type.is_some()),
            ("targetId", target_id.is_some()),
            ("url", url.is_some()),
            ("parentId", parent_id.is_some()),
            ("visible", visible.is_some()),
            ("sortOrder", sort_order.is_some()),
        ];
        locales::only_localized(&l, "menu item", &given, &["label"])?;
        let item = call.store().nav_item(call.scope(), &id).await?;
        let Some(label) = label else {
            return Err(ToolError::invalid(
                format!("label: required with locale {}", l.tag),
                "Send the label in that locale; it is a menu item's one localised field.",
            ));
        };
        let written = translate_label(call, &l, &item, &label).await?;
        let msg = format!("Wrote the {} label of menu item \"{}\": \"{label}\".", l.tag, item.label);
        return nav_item_in(call, &l, &item, &written, msg).await;
    }
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
