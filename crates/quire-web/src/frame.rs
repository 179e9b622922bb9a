//! What every screen shares: the header with the person, the site and
//! environment switcher (always visible), the navigation and the CSRF
//! secret forms carry; and the switch itself.

use crate::error::WebError;
use crate::form::Form;
use crate::{CSRF_FIELD, Person};
use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use quire_core::access::{Permission, authorize};
use quire_core::model::EntityKind;
use quire_server::AppState;
use serde::Deserialize;
use std::collections::HashMap;

/// The screens of the navigation, in order: (path, label).
const NAV: [(&str, &str); 18] = [
    ("/", "Dashboard"),
    ("/pages", "Pages"),
    ("/collections", "Posts and collections"),
    ("/media", "Media"),
    ("/navigation", "Navigation"),
    ("/releases", "Releases"),
    ("/notes", "Notes"),
    ("/history", "History"),
    ("/archive", "Archive"),
    ("/approvals", "Approvals"),
    ("/me/approvals", "My approvals"),
    ("/agents", "Agents"),
    ("/users", "People"),
    ("/tokens", "API tokens"),
    ("/webhooks", "Webhooks"),
    ("/environments", "Environments"),
    ("/site", "Site"),
    ("/sites", "Sites"),
];

/// Screens only administrators see.
const ADMIN_ONLY: [&str; 5] = ["/agents", "/users", "/tokens", "/webhooks", "/site"];

/// One entry of the site and environment switcher.
pub struct Place {
    /// `site-slug/env`, the switcher's value.
    pub value: String,
    /// What the option reads.
    pub label: String,
    /// Whether it is the current one.
    pub current: bool,
}

/// The shared part of every signed-in screen.
pub struct Frame {
    /// The person's display name.
    pub name: String,
    /// Their user id (the change log knows them as `user:<id>`).
    pub user_id: String,
    /// Their group.
    pub group: &'static str,
    /// The session's CSRF secret, for forms.
    pub csrf: String,
    /// The form field that carries it.
    pub csrf_field: &'static str,
    /// Current environment.
    pub env: String,
    /// Every site and environment the person may switch to.
    pub places: Vec<Place>,
    /// Navigation: (path, label, current).
    pub nav: Vec<(&'static str, &'static str, bool)>,
    /// Whether the person may change content (writes hidden otherwise).
    pub can_write: bool,
    /// Whether they may archive and restore (editors and admins).
    pub can_delete: bool,
    /// Whether they may change menus (editors and admins).
    pub can_edit_nav: bool,
    /// Whether they administer the site (environments, webhooks, tokens).
    pub can_administer: bool,
    /// The colour theme they chose (`dark`, `light`), or "" to follow
    /// their system's.
    pub theme: &'static str,
}

impl Frame {
    /// The frame for `person` on the screen under `section` (a NAV path).
    pub fn new(person: &Person, section: &str) -> Self {
        let session = &person.session;
        let mut places = Vec::new();
        for s in &session.user.sites {
            for env in &s.environments {
                let current = s.site_id == session.scope.site_id && *env == session.scope.env;
                places.push(Place {
                    value: format!("{}/{env}", s.slug),
                    label: format!("{} · {env}", s.name),
                    current,
                });
            }
        }
        let group = session.user.group;
        let who = person.actor().principal();
        let may = |permission| authorize(&who, permission).is_ok();
        Frame {
            name: session.user.display_name.clone(),
            user_id: session.user.id.clone(),
            group: group.as_str(),
            csrf: session.csrf.clone(),
            csrf_field: CSRF_FIELD,
            env: session.scope.env.clone(),
            places,
            nav: NAV
                .iter()
                // Tokens are administration: only admins are offered them.
                .filter(|(path, _)| !ADMIN_ONLY.contains(path) || may(Permission::Administer))
                // Sites are the instance's: only its administrator is offered them.
                .filter(|(path, _)| *path != "/sites" || person.manages_sites)
                .map(|(path, label)| (*path, *label, *path == section))
                .collect(),
            can_write: may(Permission::Write(EntityKind::Page)),
            can_delete: may(Permission::Delete(EntityKind::Page)),
            can_edit_nav: may(Permission::Write(EntityKind::NavItem)),
            can_administer: may(Permission::Administer),
            theme: person.theme,
        }
    }
}

/// Who did something, in words: the person on screen as "you", other
/// people by their name, an API token by its name, read once for a screen
/// (`quire_app`'s `actor_names`).
pub struct Who {
    me: String,
    name: String,
    /// Actor (`user:<id>`, `token:<id>`) → name.
    names: HashMap<String, String>,
}

impl Who {
    /// Names as `person` sees them, knowing only themselves.
    pub fn of(person: &Person) -> Who {
        let user = &person.session.user;
        Who { me: format!("user:{}", user.id), name: user.display_name.clone(), names: HashMap::new() }
    }

    /// Names as `person` sees them, with the names of `actors` read at once.
    pub async fn named<'a>(person: &Person, actors: impl IntoIterator<Item = &'a str>) -> Who {
        let mut who = Who::of(person);
        who.learn(person, actors).await;
        who
    }

    /// Reads the names of those of `actors` not known yet (in one go). A
    /// failure leaves them unnamed: names are a comfort, the screen still works.
    pub async fn learn<'a>(&mut self, person: &Person, actors: impl IntoIterator<Item = &'a str>) {
        let mut asked: Vec<String> =
            actors.into_iter().filter(|a| *a != self.me && !self.names.contains_key(*a)).map(str::to_string).collect();
        asked.sort();
        asked.dedup();
        if asked.is_empty() {
            return;
        }
        if let Ok(names) = person.content.actor_names(&asked).await {
            self.names.extend(names);
        }
    }

    /// What `actor` (`user:<id>`, `token:<id>`) is called.
    pub fn name(&self, actor: &str) -> String {
        if actor == self.me {
            return format!("{} (you)", self.name);
        }
        if let Some(name) = self.names.get(actor) {
            return name.clone();
        }
        match actor.split_once(':') {
            Some(("user", _)) => "a person no longer on this site".to_string(),
            Some(("token", _)) => "a revoked API token".to_string(),
            _ => actor.to_string(),
        }
    }

    /// Everyone named so far but the person on screen, by name: the
    /// choices of a "by" filter.
    pub fn known(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = self.names.iter().map(|(a, n)| (a.clone(), n.clone())).collect();
        out.sort_by_key(|(_, name)| name.to_lowercase());
        out
    }
}

/// The cookie that remembers a person's colour theme in this browser.
pub const THEME_COOKIE: &str = "quire_theme";

/// The theme a request's cookie chose: `dark`, `light`, or "" (the system's).
pub fn theme_of(headers: &axum::http::HeaderMap) -> &'static str {
    let cookies = headers.get_all(axum::http::header::COOKIE).iter().filter_map(|v| v.to_str().ok());
    for pair in cookies.flat_map(|c| c.split(';')) {
        match pair.trim().split_once('=') {
            Some((THEME_COOKIE, "dark")) => return "dark",
            Some((THEME_COOKIE, "light")) => return "light",
            _ => {}
        }
    }
    ""
}

/// The theme form.
#[derive(Deserialize)]
pub struct ThemeForm {
    /// `dark`, `light`, or empty: follow the system's.
    #[serde(default)]
    theme: String,
}

/// `POST /theme`: remembers the colour theme in this browser (a cookie of
/// a year; none: follow the system's), then back to the screen it was
/// chosen on.
pub async fn theme(_person: Person, headers: axum::http::HeaderMap, Form(form): Form<ThemeForm>) -> Response {
    let cookie = match form.theme.as_str() {
        t @ ("dark" | "light") => format!("{THEME_COOKIE}={t}; Path=/; Max-Age=31536000; SameSite=Lax"),
        _ => format!("{THEME_COOKIE}=; Path=/; Max-Age=0; SameSite=Lax"),
    };
    let referer = headers.get(axum::http::header::REFERER).and_then(|v| v.to_str().ok()).unwrap_or_default();
    // Only the path of a page of this site is gone back to.
    let path = referer.split_once("://").and_then(|(_, rest)| rest.find('/').map(|i| &rest[i..]));
    let back = safe_back(path);
    ([(axum::http::header::SET_COOKIE, cookie)], Redirect::to(&back)).into_response()
}

/// The switcher's form.
#[derive(Deserialize)]
pub struct Switch {
    /// `site-slug/env`.
    place: String,
    /// Where to go back to.
    #[serde(default)]
    back: Option<String>,
}

/// Moves the session to another site and environment the person may use.
pub async fn switch(State(state): State<AppState>, person: Person, Form(form): Form<Switch>) -> Response {
    let Some((site, env)) = form.place.split_once('/') else {
        return WebError::Status(
            axum::http::StatusCode::BAD_REQUEST,
            format!("\"{}\" names no environment", form.place),
        )
        .into_response();
    };
    match quire_app::people::switch(state.store(), &person.session, site, env).await {
        Ok(_) => Redirect::to(&safe_back(form.back.as_deref())).into_response(),
        Err(e) => WebError::from(e).into_response(),
    }
}

/// A local path to go back to, or `/` (never another site): it starts with
/// one `/` and holds only visible ASCII (no backslash, space, tab or other
/// control a browser would strip into `//elsewhere`).
pub fn safe_back(back: Option<&str>) -> String {
    match back {
        Some(p)
            if p.starts_with('/') && !p.starts_with("//") && p.chars().all(|c| c.is_ascii_graphic() && c != '\\') =>
        {
            p.to_string()
        }
        _ => "/".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::safe_back;

    #[test]
    fn only_local_paths_are_gone_back_to() {
        assert_eq!(safe_back(Some("/pages?parent=1")), "/pages?parent=1");
        for bad in ["//evil.example", "/\t/evil.example", "/\\evil.example", "https://evil.example", "/ /x", "/\u{7f}"]
        {
            assert_eq!(safe_back(Some(bad)), "/", "{bad:?}");
        }
        assert_eq!(safe_back(None), "/");
    }
}
