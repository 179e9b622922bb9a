//! Navigation menus: the list of menus, and a menu's items as a nested
//! tree with a target picker (a page, an entry, an image or a URL), moves
//! among siblings, editing and archiving.

use crate::Person;
use crate::error::WebError;
use crate::form::Form;
use crate::form::{self, Errors};
use crate::frame::Frame;
use crate::pages::{Head, MoveForm, Moving, refused};
use crate::publishing::Outcome;
use askama::Template;
use axum::extract::{Path, Query};
use axum::response::{Html, IntoResponse, Redirect, Response};
use quire_app::content::Content;
use quire_app::{AppError, Failure};
use quire_core::access::Permission;
use quire_core::input::{NavItemPatch, NewNavItem, NewNavigation};
use quire_core::model::{EntityKind, NavItem, NavTargetType, Navigation};
use std::collections::HashMap;

/// Most items of one menu the screen shows.
const MOST_ITEMS: usize = 1000;
/// Most candidates of each kind the target picker suggests (entries: per
/// collection). Targets beyond them are still named, looked up one by one.
const SUGGESTED: u32 = 60;
const SUGGESTED_ENTRIES: u32 = 20;

#[derive(Template)]
#[template(path = "navigations.html")]
struct MenusPage {
    head: Head,
    frame: Frame,
    menus: Vec<Navigation>,
    /// The cursor of the next screen of menus.
    next: Option<String>,
    new_key: String,
    new_name: String,
    errors: Errors,
}

async fn menus_page(
    person: &Person,
    cursor: Option<&str>,
    new: (String, String),
    errors: Errors,
) -> Result<MenusPage, WebError> {
    let listing = person.content.navigations(MENUS_PER_SCREEN, cursor).await.map_err(WebError::listing)?;
    Ok(MenusPage {
        head: Head::new(),
        frame: Frame::new(person, "/navigation"),
        menus: listing.items,
        next: listing.next_cursor,
        new_key: new.0,
        new_name: new.1,
        errors,
    })
}

/// Menus per screen.
const MENUS_PER_SCREEN: u32 = 50;

/// Which screen of menus.
#[derive(serde::Deserialize, Default)]
pub struct MenusQuery {
    cursor: Option<String>,
}

/// `GET /navigation`: the menus, a screen at a time.
pub async fn list(person: Person, Query(q): Query<MenusQuery>) -> Result<Html<String>, WebError> {
    let page = menus_page(&person, q.cursor.as_deref(), Default::default(), Errors::new()).await?;
    Ok(Html(page.render()?))
}

#[derive(serde::Deserialize)]
pub struct NewMenuForm {
    key: String,
    name: String,
}

/// `POST /navigation`: creates a menu.
pub async fn create(person: Person, Form(f): Form<NewMenuForm>) -> Response {
    let input = NewNavigation { key: f.key.clone(), name: f.name.clone(), max_items: None };
    match person.content.create_navigation(input).await {
        Ok(menu) => Redirect::to(&format!("/navigation/{}", menu.id)).into_response(),
        // The person may not: that is the answer; a refused menu: the form again.
        Err(e) if e.failure == Failure::Forbidden => WebError::from(e).into_response(),
        Err(e) => refused(menus_page(&person, None, (f.key, f.name), form::errors_of(&e, "")).await),
    }
}

/// An item in the tree, with what its target is called.
pub struct Node {
    pub item: NavItem,
    pub target: String,
    pub depth: usize,
    /// Whether it is the first / last of its siblings.
    pub first: bool,
    pub last: bool,
}

/// Something a menu item can point at, as the picker offers it.
pub struct Candidate {
    pub id: String,
    pub label: String,
}

/// The candidates of each target type.
pub struct Picker {
    pub pages: Vec<Candidate>,
    pub entries: Vec<Candidate>,
    pub media: Vec<Candidate>,
}

impl Picker {
    async fn load(content: &Content) -> Result<Picker, WebError> {
        // Ids and names only, one light query per kind.
        let pages = content.page_suggestions(SUGGESTED).await?;
        let entries = content.entry_suggestions(20, SUGGESTED_ENTRIES).await?;
        let media = content.image_suggestions(SUGGESTED).await?;
        Ok(Picker {
            pages: pages
                .into_iter()
                .map(|p| Candidate { label: format!("{} (/{})", p.label, p.place), id: p.id })
                .collect(),
            entries: entries
                .into_iter()
                .map(|e| Candidate { label: format!("{} › {}", e.place, e.label), id: e.id })
                .collect(),
            media: media.into_iter().map(|i| Candidate { id: i.id, label: i.label }).collect(),
        })
    }

    /// Adds the targets of `items` the suggestions do not hold, so each
    /// item is named by what it points at.
    async fn name_targets(&mut self, content: &Content, items: &[NavItem]) {
        for item in items {
            let Some(id) = item.target_id.as_deref() else { continue };
            let known = |list: &[Candidate]| list.iter().any(|c| c.id == id);
            match item.target_type {
                NavTargetType::Page if !known(&self.pages) => {
                    if let Ok(p) = content.page(id).await {
                        self.pages.push(Candidate { id: p.id, label: format!("{} (/{})", p.name, p.slug) });
                    }
                }
                NavTargetType::Entry if !known(&self.entries) => {
                    if let Ok(e) = content.entry(id).await {
                        self.entries.push(Candidate { id: e.id, label: e.title });
                    }
                }
                NavTargetType::Media if !known(&self.media) => {
                    if let Ok(i) = content.image(id).await {
                        self.media.push(Candidate { label: i.alt.clone().unwrap_or(i.filename), id: i.id });
                    }
                }
                _ => {}
            }
        }
    }

    /// The candidates of target type `kind`.
    fn of(&self, kind: NavTargetType) -> &[Candidate] {
        match kind {
            NavTargetType::Page => &self.pages,
            NavTargetType::Entry => &self.entries,
            NavTargetType::Media => &self.media,
            _ => &[],
        }
    }

    /// What a form shows in the target box for `item`: the name of what it
    /// points at as the suggestions offer it (so it reads as a name, and is
    /// read back to the same id), its URL, or its id when unnamed.
    fn typed_target(&self, item: &NavItem) -> String {
        match (item.url.as_deref(), item.target_id.as_deref()) {
            (Some(url), _) => url.to_string(),
            (None, Some(id)) => self
                .of(item.target_type)
                .iter()
                .find(|c| c.id == id)
                .map_or_else(|| id.to_string(), |c| c.label.clone()),
            (None, None) => String::new(),
        }
    }

    /// What `item` points at, in words.
    fn describe(&self, item: &NavItem) -> String {
        let named = |list: &[Candidate], id: &str| {
            list.iter().find(|c| c.id == id).map(|c| c.label.clone()).unwrap_or_else(|| id.to_string())
        };
        match (item.target_type, item.target_id.as_deref(), item.url.as_deref()) {
            (NavTargetType::Page, Some(id), _) => format!("page: {}", named(&self.pages, id)),
            (NavTargetType::Entry, Some(id), _) => format!("entry: {}", named(&self.entries, id)),
            (NavTargetType::Media, Some(id), _) => format!("image: {}", named(&self.media, id)),
            (NavTargetType::Url, _, Some(url)) => url.to_string(),
            (t, _, _) => t.as_str().to_string(),
        }
    }
}

/// The menu's items, depth first, each under its parent.
fn tree(items: Vec<NavItem>, picker: &Picker) -> Vec<Node> {
    let mut children: HashMap<Option<String>, Vec<NavItem>> = HashMap::new();
    let known: std::collections::HashSet<String> = items.iter().map(|i| i.id.clone()).collect();
    for item in items {
        // An item whose parent is gone is shown at the top level.
        let parent = item.parent_id.clone().filter(|p| known.contains(p));
        children.entry(parent).or_default().push(item);
    }
    let mut out = Vec::new();
    fn walk(
        parent: Option<String>,
        depth: usize,
        children: &mut HashMap<Option<String>, Vec<NavItem>>,
        picker: &Picker,
        out: &mut Vec<Node>,
    ) {
        let Some(mut list) = children.remove(&parent) else { return };
        list.sort_by(|a, b| (a.sort_order, &a.id).cmp(&(b.sort_order, &b.id)));
        let n = list.len();
        for (i, item) in list.into_iter().enumerate() {
            let id = item.id.clone();
            out.push(Node { target: picker.describe(&item), item, depth, first: i == 0, last: i + 1 == n });
            walk(Some(id), depth + 1, children, picker, out);
        }
    }
    walk(None, 0, &mut children, picker, &mut out);
    out
}

#[derive(Template)]
#[template(path = "navigation.html")]
struct MenuPage {
    head: Head,
    frame: Frame,
    menu: Navigation,
    nodes: Vec<Node>,
    picker: Picker,
    types: &'static [NavTargetType],
    publishing: crate::publishing::Panel,
    /// The add-item form as typed (after a refusal).
    typed: Typed,
    errors: Errors,
}

/// An item form's values.
#[derive(Default)]
pub struct Typed {
    pub label: String,
    pub target_type: String,
    pub target: String,
    pub parent_id: String,
    pub visible: bool,
}

/// The menu's items (up to [`MOST_ITEMS`]).
async fn all_items(content: &Content, menu: &str) -> Result<Vec<NavItem>, WebError> {
    let mut items = Vec::new();
    let mut cursor = None;
    loop {
        let page = content.nav_items(menu, None, 100, cursor.as_deref()).await?;
        items.extend(page.items);
        match page.next_cursor {
            Some(c) if items.len() < MOST_ITEMS => cursor = Some(c),
            _ => break,
        }
    }
    Ok(items)
}

async fn menu_page(person: &Person, id: &str, typed: Typed, errors: Errors) -> Result<MenuPage, WebError> {
    let content = &person.content;
    let menu = content.navigation(id).await?;
    let items = all_items(content, &menu.id).await?;
    let mut picker = Picker::load(content).await?;
    picker.name_targets(content, &items).await;
    let action = format!("/navigation/{}/publishing", menu.id);
    let publishing = crate::publishing::Panel::of(person, EntityKind::Navigation, &menu.id, action).await?;
    Ok(MenuPage {
        publishing,
        head: Head::new(),
        frame: Frame::new(person, "/navigation"),
        nodes: tree(items, &picker),
        menu,
        picker,
        types: NavTargetType::ALL,
        typed,
        errors,
    })
}

/// `GET /navigation/{id}`: a menu's items.
pub async fn show(
    person: Person,
    Path(id): Path<String>,
    Query(q): Query<crate::pages::SavedQuery>,
) -> Result<Html<String>, WebError> {
    let typed = Typed { target_type: "page".into(), visible: true, ..Default::default() };
    let mut page = menu_page(&person, &id, typed, Errors::new()).await?;
    page.publishing = page.publishing.after(q.done.as_deref(), q.release.as_deref());
    Ok(Html(page.render()?))
}

/// `POST /navigation/{id}/publishing`: the publishing panel's forms, then
/// back to the menu; refused, the menu again with the reason in its panel.
pub async fn publishing(person: Person, Path(id): Path<String>, Form(pairs): Form<Vec<(String, String)>>) -> Response {
    let shown = match crate::publishing::act(&person, EntityKind::Navigation, &id, pairs).await {
        Outcome::Done(query) => return Redirect::to(&format!("/navigation/{id}?{query}")).into_response(),
        Outcome::Failed(response) => return response,
        Outcome::Refused(shown) => shown,
    };
    let status = shown.status;
    let typed = Typed { target_type: "page".into(), visible: true, ..Default::default() };
    let page = menu_page(&person, &id, typed, Errors::new()).await.map(|mut page| {
        page.publishing = shown.on(page.publishing);
        page
    });
    crate::pages::answered(status, page)
}

/// Reads an item form: label, target type, target (an id, or a URL for
/// url targets), parent and visibility.
fn read(pairs: &[(String, String)]) -> Typed {
    let get = |k: &str| form::value(pairs, k).trim().to_string();
    Typed {
        label: get("label"),
        target_type: get("target_type"),
        target: get("target"),
        parent_id: get("parent_id"),
        visible: form::checked(pairs, "visible").unwrap_or(true),
    }
}

/// The target of a form: (type, target id, url). A page may be named by
/// its slug (`/about`), an entry by `collection/slug`, and any of them by
/// its name as the suggestions offer it, instead of an id; anything else is
/// passed on for the use case to check.
async fn target(content: &Content, t: &Typed) -> Result<(NavTargetType, Option<String>, Option<String>), AppError> {
    let kind = NavTargetType::parse("targetType", &t.target_type).map_err(form::invalid)?;
    let value = Some(t.target.clone()).filter(|v| !v.is_empty());
    let found = match (kind, value) {
        (NavTargetType::Url, value) => (kind, None, value),
        (NavTargetType::Placeholder, _) => (kind, None, None),
        (NavTargetType::Page, Some(v)) if content.page(&v).await.is_err() => {
            let id = match content.page_by_slug(v.trim_start_matches('/')).await {
                Ok(p) => p.id,
                Err(_) => v,
            };
            (kind, Some(id), None)
        }
        (NavTargetType::Entry, Some(v)) if content.entry(&v).await.is_err() => {
            let id = match v.split_once('/') {
                Some((c, slug)) => content.entry_by_slug(c, slug).await.map(|e| e.id).unwrap_or(v),
                None => v,
            };
            (kind, Some(id), None)
        }
        (_, value) => (kind, value, None),
    };
    // Still not an id: a name as the suggestions offer it.
    let named = matches!(kind, NavTargetType::Page | NavTargetType::Entry | NavTargetType::Media);
    if let Some(v) = &found.1
        && named
        && !exists(content, kind, v).await
    {
        let picker = Picker::load(content).await.map_err(|_| AppError::invalid("targetId", "targetId: not found"))?;
        if let Some(c) = picker.of(kind).iter().find(|c| c.label == *v) {
            return Ok((kind, Some(c.id.clone()), None));
        }
    }
    Ok(found)
}

/// Whether `id` names a live record a target of type `kind` may point at.
async fn exists(content: &Content, kind: NavTargetType, id: &str) -> bool {
    match kind {
        NavTargetType::Page => content.page(id).await.is_ok(),
        NavTargetType::Entry => content.entry(id).await.is_ok(),
        NavTargetType::Media => content.image(id).await.is_ok(),
        _ => true,
    }
}

/// `POST /navigation/{id}/items`: adds an item.
pub async fn add_item(person: Person, Path(id): Path<String>, Form(pairs): Form<Vec<(String, String)>>) -> Response {
    let typed = read(&pairs);
    let result = async {
        person.require(Permission::Write(EntityKind::NavItem))?;
        let made = match target(&person.content, &typed).await {
            Ok((target_type, target_id, url)) => {
                let input = NewNavItem {
                    label: typed.label.clone(),
                    target_type,
                    target_id,
                    url,
                    parent_id: Some(typed.parent_id.clone()).filter(|p| !p.is_empty()),
                    sort_order: None,
                    visible: Some(typed.visible),
                };
                person.content.create_nav_item(&id, input).await
            }
            Err(e) => Err(e),
        };
        Ok::<_, WebError>(made)
    }
    .await;
    match result {
        Ok(Ok(item)) => Redirect::to(&format!("/navigation/{id}#item-{}", item.id)).into_response(),
        Ok(Err(e)) => refused(menu_page(&person, &id, typed, form::errors_of(&e, "")).await),
        Err(e) => e.into_response(),
    }
}

#[derive(Template)]
#[template(path = "nav_item.html")]
struct ItemPage {
    head: Head,
    frame: Frame,
    menu: Navigation,
    item: NavItem,
    /// Other items of the menu it may move under: (id, label).
    parents: Vec<(String, String)>,
    picker: Picker,
    types: &'static [NavTargetType],
    typed: Typed,
    errors: Errors,
}

async fn item_page(person: &Person, item: NavItem, typed: Option<Typed>, errors: Errors) -> Result<ItemPage, WebError> {
    let content = &person.content;
    let menu = content.navigation(&item.navigation_id).await?;
    let others = all_items(content, &menu.id).await?;
    let mut picker = Picker::load(content).await?;
    picker.name_targets(content, std::slice::from_ref(&item)).await;
    let typed = typed.unwrap_or_else(|| Typed {
        label: item.label.clone(),
        target_type: item.target_type.as_str().to_string(),
        target: picker.typed_target(&item),
        parent_id: item.parent_id.clone().unwrap_or_default(),
        visible: item.visible,
    });
    Ok(ItemPage {
        head: Head::new(),
        frame: Frame::new(person, "/navigation"),
        parents: others.into_iter().filter(|o| o.id != item.id).map(|o| (o.id, o.label)).collect(),
        picker,
        types: NavTargetType::ALL,
        menu,
        item,
        typed,
        errors,
    })
}

/// `GET /nav-items/{id}`: an item's form.
pub async fn edit_item(person: Person, Path(id): Path<String>) -> Response {
    let screen = async {
        let item = person.content.nav_item(&id).await?;
        Ok(Html(item_page(&person, item, None, Errors::new()).await?.render()?))
    }
    .await;
    crate::removal::or_archived(&person, EntityKind::NavItem, &id, screen).await
}

/// `POST /nav-items/{id}`: saves an item.
pub async fn update_item(person: Person, Path(id): Path<String>, Form(pairs): Form<Vec<(String, String)>>) -> Response {
    let typed = read(&pairs);
    let result = async {
        person.require(Permission::Write(EntityKind::NavItem))?;
        let item = person.content.nav_item(&id).await?;
        let saved = match (form::stale(&pairs, item.version), target(&person.content, &typed).await) {
            (Some(e), _) | (None, Err(e)) => Err(e),
            (None, Ok((target_type, target_id, url))) => {
                let patch = NavItemPatch {
                    label: Some(typed.label.clone()),
                    target_type: Some(target_type),
                    target_id: Some(target_id),
                    url: Some(url),
                    parent_id: Some(Some(typed.parent_id.clone()).filter(|p| !p.is_empty())),
                    sort_order: None,
                    visible: Some(typed.visible),
                };
                person.content.update_nav_item(&id, patch).await
            }
        };
        Ok::<_, WebError>((item, saved))
    }
    .await;
    match result {
        Ok((_, Ok(item))) => {
            Redirect::to(&format!("/navigation/{}#item-{}", item.navigation_id, item.id)).into_response()
        }
        Ok((item, Err(e))) => refused(item_page(&person, item, Some(typed), form::errors_of(&e, "")).await),
        Err(e) => e.into_response(),
    }
}

/// `POST /nav-items/{id}/move`: moves an item one place up or down among
/// its siblings, or straight before or after one of them (one transaction
/// either way).
pub async fn move_item(person: Person, Path(id): Path<String>, Form(f): Form<MoveForm>) -> Result<Redirect, WebError> {
    person.require(Permission::Write(EntityKind::NavItem))?;
    let item = person.content.nav_item(&id).await?;
    match f.moving()? {
        Moving::By(by) => person.content.shift_nav_item(&id, by).await?,
        Moving::To(place) => person.content.move_nav_item(&id, place).await?,
    }
    Ok(Redirect::to(&format!("/navigation/{}#item-{id}", item.navigation_id)))
}

/// `POST /nav-items/{id}/archive`: archives an item and the items under it.
pub async fn archive_item(person: Person, Path(id): Path<String>) -> Result<Redirect, WebError> {
    person.require(Permission::Delete(EntityKind::NavItem))?;
    let item = person.content.nav_item(&id).await?;
    person.content.archive_one(EntityKind::NavItem, id).await?;
    Ok(Redirect::to(&format!("/navigation/{}", item.navigation_id)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, parent: Option<&str>, order: i64) -> NavItem {
        serde_json::from_value(serde_json::json!({
            "id": id, "navigationId": "n", "parentId": parent, "label": id, "targetType": "url",
            "targetId": null, "url": format!("https://example.com/{id}"), "sortOrder": order, "visible": true,
            "version": 1, "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z"
        }))
        .unwrap()
    }

    #[test]
    fn the_tree_nests_children_under_their_parent_in_order() {
        let picker = Picker { pages: vec![], entries: vec![], media: vec![] };
        let items = vec![
            item("b", None, 2),
            item("a", None, 1),
            item("a2", Some("a"), 2),
            item("a1", Some("a"), 1),
            item("o", Some("gone"), 0),
        ];
        let nodes = tree(items, &picker);
        let shape: Vec<(&str, usize, bool, bool)> =
            nodes.iter().map(|n| (n.item.id.as_str(), n.depth, n.first, n.last)).collect();
        assert_eq!(
            shape,
            vec![
                ("o", 0, true, false),
                ("a", 0, false, false),
                ("a1", 1, true, false),
                ("a2", 1, false, true),
                ("b", 0, false, true)
            ]
        );
        assert_eq!(nodes[1].target, "https://example.com/a");
    }
}
