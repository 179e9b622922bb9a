//! What every screen shares: the header with the person, the site and
//! environment switcher (always visible), the navigation and the CSRF
//! secret forms carry; and the switch itself.

use crate::error::WebError;
use crate::{CSRF_FIELD, Person};
use axum::Form;
use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use quire_core::access::{Permission, authorize};
use quire_core::model::EntityKind;
use quire_server::AppState;
use serde::Deserialize;
use std::collections::HashMap;

/// The screens of the navigation, in order: (path, label).
const NAV: [(&str, &str); 12] = [
    ("/pages", "Pages"),
    ("/collections", "Posts and collections"),
    ("/media", "Media"),
    ("/navigation", "Navigation"),
    ("/releases", "Releases"),
    ("/notes", "Notes"),
    ("/history", "History"),
    ("/archive", "Archive"),
    ("/approvals", "Approvals"),
    ("/agents", "Agents"),
    ("/tokens", "API tokens"),
    ("/site", "Site"),
];

/// Screens only administrators see.
const ADMIN_ONLY: [&str; 3] = ["/agents", "/tokens", "/site"];

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
            group: group.as_str(),
            csrf: session.csrf.clone(),
            csrf_field: CSRF_FIELD,
            env: session.scope.env.clone(),
            places,
            nav: NAV
                .iter()
                // Tokens are administration: only admins are offered them.
                .filter(|(path, _)| !ADMIN_ONLY.contains(path) || may(Permission::Administer))
                .map(|(path, label)| (*path, *label, *path == section))
                .collect(),
            can_write: may(Permission::Write(EntityKind::Page)),
            can_delete: may(Permission::Delete(EntityKind::Page)),
            can_edit_nav: may(Permission::Write(EntityKind::NavItem)),
        }
    }
}

/// Who did something, in words: the person on screen by their name, an
/// API token by its name (for those who may list tokens), anyone else as
/// the change log names them.
pub struct Who {
    me: String,
    name: String,
    /// The site's API tokens: id → name.
    tokens: HashMap<String, String>,
}

impl Who {
    /// Names as `person` sees them.
    pub fn of(person: &Person) -> Who {
        let user = &person.session.user;
        Who { me: format!("user:{}", user.id), name: user.display_name.clone(), tokens: HashMap::new() }
    }

    /// Names as `person` sees them, with the site's API tokens by name
    /// when they may list them (administrators).
    pub async fn with_tokens(person: &Person, state: &AppState) -> Who {
        let mut who = Who::of(person);
        if let Ok(tokens) = quire_app::tokens::list(state.store(), person.actor()).await {
            who.tokens = tokens.into_iter().map(|t| (t.id, t.name)).collect();
        }
        who
    }

    /// What `actor` (`user:<id>`, `token:<id>`) is called.
    pub fn name(&self, actor: &str) -> String {
        if actor == self.me {
            return format!("{} (you)", self.name);
        }
        match actor.strip_prefix("token:").and_then(|id| self.tokens.get(id)) {
            Some(token) => format!("API token “{token}”"),
            None => actor.to_string(),
        }
    }
}

/// `/`: the back-office's start, the page tree for now.
pub async fn home(_person: Person) -> Redirect {
    Redirect::to("/pages")
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
